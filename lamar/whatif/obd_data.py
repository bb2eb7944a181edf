"""The Open Bandit Dataset sample (Saito et al. 2021; ZOZOTOWN; CC BY 4.0) as the real-data check
reads it: the logged rounds of each campaign and policy, and the Thompson sampling prior, from
the files `tools/obd_fixture.py` extracted."""

from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path

from lamar._errors import LamarError

CAMPAIGNS = ("all", "men", "women")
POSITIONS = 3  # left, centre, right in the ZOZOTOWN interface


@dataclasses.dataclass(frozen=True)
class Round:
    """One logged impression: the item shown at a position, whether it was clicked, and the
    logging policy's probability of that item at that position."""

    item: int
    position: int  # 0, 1, 2
    click: int
    propensity: float


def data_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """Where the fixture put the files: `directory`, else $LAMAR_OBD_DIR, else ~/.cache/lamar/obd."""
    if directory is not None:
        return Path(directory)
    return Path(os.environ.get("LAMAR_OBD_DIR") or Path.home() / ".cache" / "lamar" / "obd")


def load_rounds(directory: Path, policy: str, campaign: str) -> list[Round]:
    """The rounds of one log (policy "random" or "bts"), in time order as obp sorts them.

    Raises:
        LamarError: the file is missing (run the fixture) or is not the dataset's format.
    """
    path = directory / "dataset" / "obd" / policy / campaign / f"{campaign}.csv"
    if not path.is_file():
        raise LamarError(f"{path} is missing: run `python tools/obd_fixture.py` to fetch and verify the "
                         "Open Bandit Dataset sample (or set LAMAR_OBD_DIR to where it is)")
    rows: list[tuple[str, Round]] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        try:
            at = {name: header.index(name) for name in ("timestamp", "item_id", "position", "click",
                                                         "propensity_score")}
        except ValueError as exc:
            raise LamarError(f"{path} is not an Open Bandit Dataset log: {exc}") from None
        for line in reader:
            rows.append((line[at["timestamp"]], Round(int(line[at["item_id"]]), int(line[at["position"]]) - 1,
                                                       int(line[at["click"]]), float(line[at["propensity_score"]]))))
    rows.sort(key=lambda row: row[0])  # ISO timestamps of one time zone sort as text
    return [row for _, row in rows]


def load_prior(directory: Path, campaign: str) -> tuple[list[float], list[float]]:
    """The Beta prior (alpha, beta per item) of ZOZOTOWN's Bernoulli Thompson sampling policy for
    `campaign`, as obp ships it in policy/conf/prior_bts.yaml.

    The file is three campaigns, each with an `alpha:` and a `beta:` list of numbers; it is read
    here without a YAML library (the core imports only the standard library), strictly: any
    other line is an error.
    """
    path = directory / "policy" / "conf" / "prior_bts.yaml"
    if not path.is_file():
        raise LamarError(f"{path} is missing: run `python tools/obd_fixture.py`")
    priors: dict[str, dict[str, list[float]]] = {}
    current: list[float] | None = None
    section: dict[str, list[float]] | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip()
        if not line:
            continue
        if not line.startswith(" ") and line.endswith(":"):
            section = priors.setdefault(line[:-1], {})
        elif line.startswith("  ") and not line.startswith("   ") and line.endswith(":") and section is not None:
            current = section.setdefault(line.strip()[:-1], [])
        elif line.lstrip().startswith("- ") and current is not None:
            current.append(float(line.lstrip()[2:]))
        else:
            raise LamarError(f"{path}:{number}: unexpected line {raw!r}")
    found = priors.get(campaign, {})
    alpha, beta = found.get("alpha"), found.get("beta")
    if not alpha or not beta or len(alpha) != len(beta):
        raise LamarError(f"{path} has no alpha and beta lists of one length for campaign {campaign!r}")
    return alpha, beta
