"""`LamarPostprocessor` inside real LlamaIndex query engines: what it keeps, drops, stamps and logs."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from lamar import Experience, InvalidContext, Lamar, Scope, Signal
from lamar_llamaindex import (
    EPISODE_ID,
    EXPERIENCE_ID,
    LamarPostprocessor,
    experience_id_of,
    lessons_to_nodes,
    report_response,
    track_episodes,
)

QUERY = "the build fails after a dependency bump"


def engine_with_lessons(n: int = 4, **tuning: object) -> tuple[Lamar, list[str]]:
    """Lamar with n lessons scoped to project "shop"; holdout all but off unless tuned."""
    options = {"holdout": 1e-9, **tuning}
    lam = Lamar(":memory:", k=3, seed=5, **options)
    ids = [lam.add(Experience(f"the build fails with error E{i}", f"apply fix number {i}",
                              scope=Scope(project="shop"))) for i in range(n)]
    return lam, ids


def as_retrieved(nodes: list[TextNode]) -> list[NodeWithScore]:
    """What a retriever would hand over: similarity scores, most similar first."""
    return [NodeWithScore(node=node, score=1.0 - i / 10) for i, node in enumerate(nodes)]


def test_is_a_real_llamaindex_postprocessor() -> None:
    lam, _ = engine_with_lessons()
    post = LamarPostprocessor(lam, top_n=2, context={"project": "shop"})
    assert isinstance(post, BaseNodePostprocessor)
    assert post.class_name() == "LamarPostprocessor"
    assert post.to_dict() == {"top_n": 2, "passthrough": True, "class_name": "LamarPostprocessor"}
    assert LamarPostprocessor(lamar=lam).top_n == 3  # the documented keyword form


def test_query_engine_synthesizes_exactly_what_lamar_chose() -> None:
    lam, ids = engine_with_lessons(4)
    index = VectorStoreIndex(lessons_to_nodes(lam))
    post = LamarPostprocessor(lam, top_n=2, context={"project": "shop"})
    query_engine = index.as_query_engine(similarity_top_k=4, node_postprocessors=[post])

    response = query_engine.query(QUERY)

    episode = lam.episode(post.last_episode_id)
    assert sorted(episode.eligible) == sorted(ids)  # all four retrieved lessons were candidates
    assert [experience_id_of(n) for n in response.source_nodes] == episode.injected
    assert len(episode.injected) == 2
    # MockLLM answers with the prompt it was given: the synthesizer saw the chosen lessons only.
    for lesson_id in ids:
        text = lam.get(lesson_id).render()
        assert (text in str(response)) == (lesson_id in episode.injected)
    assert all(n.node.metadata[EPISODE_ID] == episode.id for n in response.source_nodes)
    assert [n.score for n in response.source_nodes] == [1.0, 0.5]



def test_a_long_value_from_the_context_function_is_left_out_and_the_query_answers() -> None:
    lam, ids = engine_with_lessons(4)
    # A value of 5,000 characters on one query.
    post = LamarPostprocessor(lam, top_n=2, context={"project": "shop"}, context_fn=lambda q: {"log": "x" * 5_000})
    query_engine = VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(similarity_top_k=4,
                                                                          node_postprocessors=[post])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        response = query_engine.query(QUERY)
    said = [str(w.message) for w in seen if issubclass(w.category, UserWarning)]
    assert len(said) == 1 and "left out 'log' (5,000 characters)" in said[0] and "4,000" in said[0], said
    episode = lam.episode(post.last_episode_id)
    assert episode.context == {"project": "shop"}
    assert sorted(episode.eligible) == sorted(ids) and len(episode.injected) == 2
    assert [experience_id_of(n) for n in response.source_nodes] == episode.injected

def test_ids_stay_out_of_the_prompt_and_stored_nodes_stay_untouched() -> None:
    lam, _ = engine_with_lessons(2)
    nodes = lessons_to_nodes(lam)
    post = LamarPostprocessor(lam, top_n=2, context={"project": "shop"})

    out = post.postprocess_nodes(as_retrieved(nodes), query_str=QUERY)

    for item in out:
        llm_view = item.node.get_content(metadata_mode=MetadataMode.LLM)
        assert item.node.metadata[EPISODE_ID] not in llm_view
        assert item.node.metadata[EXPERIENCE_ID] not in llm_view
    assert all(EPISODE_ID not in node.metadata for node in nodes)  # the retriever's copies


def test_non_lesson_nodes_pass_through_untouched_after_the_lessons() -> None:
    lam, ids = engine_with_lessons(2)
    doc = TextNode(text="The shop builds with Gradle 8.", metadata={"source": "wiki"})
    foreign = TextNode(text="a lesson from another store", metadata={EXPERIENCE_ID: "exp_unknown"})
    retrieved = as_retrieved([doc, *lessons_to_nodes(lam), foreign])

    out = LamarPostprocessor(lam, top_n=2, context={"project": "shop"}).postprocess_nodes(retrieved)

    assert [experience_id_of(n) for n in out[:2]] and {experience_id_of(n) for n in out[:2]} == set(ids)
    assert out[2] is retrieved[0] and out[3] is retrieved[3]  # same objects, same scores, retrieved order
    assert out[2].node.metadata == {"source": "wiki"}

    dropped = LamarPostprocessor(lam, top_n=2, context={"project": "shop"}, passthrough=False)
    assert [experience_id_of(n) for n in dropped.postprocess_nodes(retrieved)] == \
        [experience_id_of(n) for n in out[:2]]


def test_empty_candidates_return_empty_and_log_no_episode() -> None:
    lam, _ = engine_with_lessons(2)
    post = LamarPostprocessor(lam, top_n=2, context={"project": "shop"})
    before = lam.stats()["episodes"]

    with track_episodes() as log:
        assert post.postprocess_nodes([], query_str=QUERY) == []
        docs_only = as_retrieved([TextNode(text="plain page")])
        assert post.postprocess_nodes(docs_only, query_str=QUERY) == docs_only

    assert post.last_episode_id is None and log.ids == []
    assert lam.stats()["episodes"] == before


def test_retired_lesson_node_is_dropped_and_never_a_candidate() -> None:
    lam, ids = engine_with_lessons(3)
    nodes = lessons_to_nodes(lam)  # indexed while all three were active
    lam.retire(ids[0], "proven harmful")
    post = LamarPostprocessor(lam, top_n=3, context={"project": "shop"})

    out = post.postprocess_nodes(as_retrieved(nodes), query_str=QUERY)

    assert ids[0] not in {experience_id_of(n) for n in out}
    assert {experience_id_of(n) for n in out} == set(ids[1:])
    assert ids[0] not in lam.episode(post.last_episode_id).eligible

    lam.retire(ids[1])
    lam.retire(ids[2])
    assert post.postprocess_nodes(as_retrieved(nodes), query_str=QUERY) == []
    assert post.last_episode_id is None  # nothing recallable: no episode


def test_out_of_scope_lessons_are_dropped_and_duplicates_count_once() -> None:
    lam, ids = engine_with_lessons(2)
    other = lam.add(Experience("the build fails", "ask the iOS team", scope=Scope(project="ios")))
    nodes = lessons_to_nodes(lam)
    chunk = TextNode(text="second chunk of lesson 0", metadata={EXPERIENCE_ID: ids[0]})
    post = LamarPostprocessor(lam, top_n=3, context={"project": "shop"})

    out = post.postprocess_nodes(as_retrieved([*nodes, chunk]), query_str=QUERY)

    assert sorted(experience_id_of(n) for n in out) == sorted(ids)
    assert other not in lam.episode(post.last_episode_id).eligible
    assert all(n.node.get_content() != chunk.text for n in out)  # the first node of a lesson wins


def test_context_static_callable_and_merged() -> None:
    lam = Lamar(":memory:", k=2, seed=3, holdout=1e-9)
    swift = lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(language="swift")))
    gradle = lam.add(Experience("the build fails", "stop the Gradle daemon", scope=Scope(language="kotlin")))
    nodes = as_retrieved(lessons_to_nodes(lam))
    seen: list[QueryBundle] = []

    def language_of(bundle: QueryBundle) -> dict[str, str]:
        seen.append(bundle)
        return {"language": "swift" if "xcode" in str(bundle).lower() else "kotlin"}

    by_query = LamarPostprocessor(lam, top_n=2, context=language_of)
    for query, expected in (("Xcode fails", swift), ("gradle fails", gradle)):
        assert [experience_id_of(n) for n in by_query.postprocess_nodes(nodes, query_str=query)] == [expected]
    assert str(seen[0]) == "Xcode fails"

    merged = LamarPostprocessor(lam, top_n=2, context={"project": "app", "language": "swift"},
                                context_fn=lambda bundle: {"language": "kotlin", "task": "build"})
    merged.postprocess_nodes(nodes, query_str="anything")
    assert lam.episode(merged.last_episode_id).context == {"project": "app", "language": "kotlin",
                                                           "task": "build"}

    broken = LamarPostprocessor(lam, context=lambda bundle: {"attempt": 3})
    with pytest.raises(InvalidContext):
        broken.context_for(QueryBundle(query_str="x"))  # said when asked; inside a query it fails open


def test_announces_itself_as_a_reranker_to_instrumentation() -> None:
    class Collect(BaseEventHandler):
        events: list[BaseEvent]

        def handle(self, event: BaseEvent, **kwargs: object) -> None:
            if isinstance(event, (ReRankStartEvent, ReRankEndEvent)):
                self.events.append(event)

    lam, _ = engine_with_lessons(3)
    collect = Collect(events=[])
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(collect)
    try:
        out = LamarPostprocessor(lam, top_n=2, context={"project": "shop"}).postprocess_nodes(
            as_retrieved(lessons_to_nodes(lam)), query_str=QUERY)
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not collect]

    start, end = collect.events
    assert isinstance(start, ReRankStartEvent) and start.model_name == "lamar" and start.top_n == 2
    assert len(start.nodes) == 3 and str(start.query) == QUERY
    assert isinstance(end, ReRankEndEvent) and end.nodes == out


def test_constructor_rejects_what_would_fail_later() -> None:
    lam, _ = engine_with_lessons(1)
    with pytest.raises(TypeError, match="Lamar engine"):
        LamarPostprocessor(lam.store)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="context"):
        LamarPostprocessor(lam, context=["project", "shop"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LamarPostprocessor(lam, top_n=-1)
    with pytest.raises(InvalidContext, match="'project' must be a string"):
        LamarPostprocessor(lam, context={"project": 7})  # would fail inside every query


async def test_async_query_uses_arecall_and_reports() -> None:
    lam, ids = engine_with_lessons(3)
    index = VectorStoreIndex(lessons_to_nodes(lam))
    post = LamarPostprocessor(lam, top_n=2, context={"project": "shop"})
    query_engine = index.as_query_engine(similarity_top_k=3, node_postprocessors=[post])

    with track_episodes() as log:
        response = await query_engine.aquery(QUERY)

    assert log.ids == [post.last_episode_id]
    episode = lam.episode(log.last)
    assert [experience_id_of(n) for n in response.source_nodes] == episode.injected
    assert len(episode.injected) == 2 and set(episode.injected) <= set(ids)
    assert report_response(lam, response, Signal.ACCEPTED) == [episode.id]
    assert lam.episode(episode.id).reward == Signal.ACCEPTED.reward


async def test_concurrent_async_queries_keep_their_own_episodes() -> None:
    lam, _ = engine_with_lessons(3)
    index = VectorStoreIndex(lessons_to_nodes(lam))
    post = LamarPostprocessor(lam, top_n=1, context={"project": "shop"})
    query_engine = index.as_query_engine(similarity_top_k=3, node_postprocessors=[post])

    async def one(query: str) -> tuple[list[str], object]:
        with track_episodes() as log:
            response = await query_engine.aquery(query)
        return log.ids, response

    results = await asyncio.gather(*(one(f"{QUERY} #{i}") for i in range(6)))

    all_ids = [ids[0] for ids, _ in results]
    assert all(len(ids) == 1 for ids, _ in results) and len(set(all_ids)) == 6
    for ids, response in results:
        assert {n.node.metadata[EPISODE_ID] for n in response.source_nodes} == set(ids)  # type: ignore[attr-defined]


class DownLLM(MockLLM):
    """An LLM whose service is down: the query fails after the postprocessor recalled."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: object) -> object:
        raise RuntimeError("the model is down")


@pytest.mark.parametrize("failed_outcome", [None, Signal.REASKED])
def test_a_query_that_fails_after_the_recall_leaves_no_pending_episode(failed_outcome: Signal | None) -> None:
    lam, _ = engine_with_lessons(3)
    index = VectorStoreIndex(lessons_to_nodes(lam))
    query_engine = index.as_query_engine(similarity_top_k=3, llm=DownLLM(),
                                         node_postprocessors=[LamarPostprocessor(lam, top_n=2,
                                                                                 context={"project": "shop"})])
    with pytest.raises(RuntimeError, match="model is down"), \
            track_episodes(lamar=lam, failed_outcome=failed_outcome) as log:
        query_engine.query(QUERY)
    assert len(log) == 1 and lam.pending() == []
    record = lam.episode(log.ids[0])
    if failed_outcome is None:
        assert record.settled == "expired" and record.reward is None
    else:
        assert record.signal == "reasked"


@pytest.mark.parametrize("failed_outcome", [None, Signal.REASKED])
def test_a_failed_run_on_a_store_gone_away_says_its_episode_stays_pending(
        tmp_path, failed_outcome: Signal | None, caplog) -> None:
    """The store goes away before the failed run is settled: the run's own error propagates, and
    one warning names the episode left pending (silence would hide it until `pending_after`)."""
    path = tmp_path / "lessons.db"
    lam = Lamar(str(path), seed=5, holdout=1e-9)
    lam.add(Experience("the build fails with error E1", "apply fix number 1", scope=Scope(project="shop")))
    post = LamarPostprocessor(lam, top_n=1, context={"project": "shop"})
    with caplog.at_level("WARNING", logger="lamar_llamaindex.outcomes"), \
            pytest.raises(RuntimeError, match="model is down"), \
            track_episodes(lamar=lam, failed_outcome=failed_outcome) as log:
        post.postprocess_nodes(as_retrieved(lessons_to_nodes(lam)), QueryBundle(query_str=QUERY))
        path.unlink()
        raise RuntimeError("the model is down")
    (record,) = [r for r in caplog.records if r.name == "lamar_llamaindex.outcomes"]
    assert record.levelname == "WARNING" and log.ids[0] in record.getMessage() and "deleted" in record.getMessage()


@pytest.mark.parametrize("failed_outcome", ["great", 3.0, True])
def test_a_bad_failed_outcome_is_refused_when_the_block_starts_not_lost_when_a_run_fails(failed_outcome) -> None:
    from lamar import InvalidReward

    lam, _ = engine_with_lessons(3)
    index = VectorStoreIndex(lessons_to_nodes(lam))
    query_engine = index.as_query_engine(similarity_top_k=3, llm=DownLLM(),
                                         node_postprocessors=[LamarPostprocessor(lam, top_n=2,
                                                                                 context={"project": "shop"})])
    with pytest.raises(InvalidReward), track_episodes(lamar=lam, failed_outcome=failed_outcome):
        query_engine.query(QUERY)  # not reached: the block refuses before it runs
    assert lam.stats()["episodes"] == 0 and lam.pending() == []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_broken_store_costs_the_reranking_not_the_query(tmp_path, mode: str, caplog) -> None:
    path = tmp_path / "lessons.json"
    lam = Lamar(str(path), seed=5)
    lam.add(Experience("the build fails with error E1", "apply fix number 1", scope=Scope(project="shop")))
    retrieved = as_retrieved([*lessons_to_nodes(lam), TextNode(text="Shop guide")])
    with path.open("a") as out:
        out.write("{garbage\n")  # the store goes bad under the running app
    post = LamarPostprocessor(lam, top_n=1, context={"project": "shop"})
    bundle = QueryBundle(query_str=QUERY)
    kept = (post.postprocess_nodes(retrieved, bundle) if mode == "sync"
            else asyncio.run(post.apostprocess_nodes(retrieved, bundle)))
    assert kept == retrieved and post.last_episode_id is None
    assert "could not re-rank" in caplog.text


def test_bad_arguments_to_the_llamaindex_pieces_are_lamar_errors() -> None:
    """A caller catching LamarError catches every argument the LlamaIndex pieces refuse (each is
    still the TypeError or ValueError it was)."""
    from lamar import LamarError
    from lamar_llamaindex import LamarMemoryBlock, create_lamar_tools, lessons_to_documents, report_response

    lam, _ = engine_with_lessons(1)
    refused = [
        lambda: LamarPostprocessor(lam.store),  # type: ignore[arg-type]
        lambda: LamarPostprocessor(lam, context=["project", "shop"]),  # type: ignore[arg-type]
        lambda: LamarPostprocessor(lam, context_fn="shop"),  # type: ignore[arg-type]
        lambda: LamarPostprocessor(lam, context=lambda q: ["shop"]).context_for(QueryBundle("q")),
        lambda: LamarMemoryBlock(lam).report(Signal.SHIPPED, "no-such-session"),
        lambda: report_response(lam, 42, Signal.SHIPPED),
        # anything but an engine first, which would fail later inside a query or an agent's turn
        lambda: LamarMemoryBlock(lam.store),
        lambda: create_lamar_tools("lessons.db"),
        lambda: lessons_to_nodes(lam.store),  # type: ignore[arg-type]
        lambda: lessons_to_documents("lessons.db"),  # type: ignore[arg-type]
        lambda: report_response(lam.store, ["ep_1"], Signal.SHIPPED),  # type: ignore[arg-type]
        lambda: track_episodes(lamar=lam.store).__enter__(),  # type: ignore[arg-type]
        # slots and statuses out of range: said by Lamar, not by a validator's dump
        lambda: LamarPostprocessor(lam, top_n=-1),
        lambda: LamarPostprocessor(lam, top_n=1.5),  # type: ignore[arg-type]
        lambda: LamarMemoryBlock(lam, k=-1),
        lambda: LamarMemoryBlock(lam, k=1_001),  # past the engine's most slots
        lambda: LamarPostprocessor(lam, top_n=10**12),
        lambda: create_lamar_tools(lam, k=-1),
        lambda: lessons_to_nodes(lam, status="bogus"),
    ]
    for call in refused:
        with pytest.raises(LamarError):
            call()
    assert lam.stats()["episodes"] == 0
    lam.recall({"project": "shop"})
    (pending,) = lam.pending()  # a script settling what is pending passes these whole
    with pytest.raises(LamarError, match=f"got PendingEpisode \\(pass its episode_id, '{pending.episode_id}'\\)"):
        report_response(lam, lam.pending(), Signal.ACCEPTED)


def _context_service_down(bundle: QueryBundle) -> dict[str, str]:
    raise RuntimeError("the context service is down")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("broken", [{"context": _context_service_down},
                                    {"context": {"project": "shop"}, "context_fn": _context_service_down},
                                    {"context": lambda bundle: None},
                                    {"context": lambda bundle: {"attempt": 3}}])
def test_a_context_function_that_fails_costs_the_reranking_not_the_query(
        tmp_path, mode: str, broken: dict, caplog) -> None:
    # The function runs inside the query engine's postprocessing: raising there failed the user's query,
    # while the memory block and the stores' failures go on without lessons.
    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    lam.add(Experience("the build fails with error E1", "apply fix number 1", scope=Scope(project="shop")))
    index = VectorStoreIndex([*lessons_to_nodes(lam), TextNode(text="Shop guide")])
    post = LamarPostprocessor(lam, top_n=1, **broken)
    engine = index.as_query_engine(llm=MockLLM(), similarity_top_k=2, node_postprocessors=[post])
    with caplog.at_level("WARNING", logger="lamar_llamaindex.postprocessor"):
        response = engine.query(QUERY) if mode == "sync" else asyncio.run(engine.aquery(QUERY))
    assert "Shop guide" in str(response) and len(response.source_nodes) == 2
    assert post.last_episode_id is None and lam.stats()["episodes"] == 0
    (record,) = [r for r in caplog.records if r.name == "lamar_llamaindex.postprocessor"]
    assert "context function" in record.getMessage() and "retriever's first 1 lessons" in record.getMessage()
