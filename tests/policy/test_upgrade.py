"""A store folded by the second decision core opens under the third: PostgreSQL's fold-mode rows
built under the old knobs are rebuilt from the log, never decoded as the new state."""

from __future__ import annotations

import json

import psycopg

from lamar import Experience, Lamar, Scope, Signal
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


def test_fold_mode_rows_of_the_second_design_are_rebuilt_not_read(postgres_url: str) -> None:
    namespace = unique_namespace("upgrade")
    url = namespace_url(postgres_url, namespace) + "&lamar_fold=on"
    try:
        lam = Lamar(url, k=2, seed=1)
        ids = [lam.add(Experience("working on t", f"apply {i}", scope=Scope(task="t"))) for i in range(3)]
        for _ in range(20):
            rec = lam.recall({"task": "t"})
            lam.report(rec.episode_id, Signal.SHIPPED)
        lam.close()
        # What the second design left behind: its tuning (with knobs this design retired) and rows
        # in its own layout, which this design cannot decode.
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            (folded,) = conn.execute("SELECT folded FROM lamar_namespaces WHERE namespace = %s",
                                     (namespace,)).fetchone()
            old = {**json.loads(folded), "change_shift": 0.4, "harm_exposure": 0.05}
            conn.execute("UPDATE lamar_namespaces SET folded = %s WHERE namespace = %s", (json.dumps(old), namespace))
            conn.execute("UPDATE lamar_lessons SET state = 'not this design''s row' WHERE namespace = %s", (namespace,))
        again = Lamar(url, k=2, seed=2)
        rec = again.recall({"task": "t"})
        again.report(rec.episode_id, Signal.SHIPPED)  # the report's own fold must not read the old rows
        again.report(again.recall({"task": "t"}).episode_id, Signal.ACCEPTED)
        assert sum(again.evidence(i).eligible for i in ids) == 3 * 22
        again.close()
    finally:
        drop_namespaces(postgres_url, namespace)
