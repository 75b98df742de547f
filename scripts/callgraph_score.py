"""How codesearch's call links compare with a type-aware tool's answers: edge precision and
recall, the share of name-only links, and links into code outside the repository, tallied
overall, per language and per kind of link."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from callgraph_links import GUESS, CallGraphView, CallSite, Links
from callgraph_oracles import Answer

NAME_ONLY = "name-only"  # how an edge resolved by its name alone is recorded (schema.RESOLUTIONS)


@dataclass
class Tally:
    sites: int = 0  # call sites sampled
    unknown: int = 0  # the tool could not place the call (or placed it on no definition): left out
    in_repo: int = 0  # the tool placed the call on a definition inside the repository
    outside: int = 0  # ... only on code outside it: any link there is false
    links: int = 0  # codesearch's links at the sites the tool placed
    confirmed: int = 0  # ... that the tool confirms
    guess_links: int = 0  # ... found by name alone (guesses, and edges recorded as name-only)
    truth: int = 0  # the tool's in-repository targets
    found: int = 0  # ... that codesearch links
    false_outside_sites: int = 0  # calls into outside code that codesearch links anyway
    false_outside_links: int = 0  # ... and how many links they got

    def figures(self) -> dict[str, float | int | None]:
        """The counts with precision, recall and the name-only share (None where nothing counts)."""
        return {**asdict(self),
                "precision": _ratio(self.confirmed, self.links), "recall": _ratio(self.found, self.truth),
                "name_only_share": _ratio(self.guess_links, self.links)}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def score(view: CallGraphView, answers: dict[CallSite, Answer], sites: list[CallSite]) -> dict[str, Tally]:
    """Tallies by group: "all", "language:NAME", "kind:resolved|guess|none" (codesearch's kind
    of link at the site) and, where the catalog records it, "how:NAME" (how an edge was found)."""
    tallies: dict[str, Tally] = {}
    for site in sites:
        links = view.links[site]
        groups = ["all", f"language:{view.languages.get(site.path, '?')}", f"kind:{links.kind}"]
        if links.how:
            groups.append(f"how:{links.how}")
        answer = answers.get(site)
        truth, outside = set(), False
        if answer is not None:
            truth = {d for path, line in answer.targets
                     if (d := view.definition_at(path, line, site.name, named=answer.local))}
            # a local value (a parameter) is no definition: any link is false, as outside
            outside = answer.outside or (answer.local and not truth)
        for tally in (tallies.setdefault(g, Tally()) for g in groups):
            tally.sites += 1
            if answer is None or (not truth and not outside):
                tally.unknown += 1
                continue
            tally.links += len(links.targets)
            tally.guess_links += len(links.targets) if _name_only(links) else 0
            tally.confirmed += len(links.targets & truth)
            if truth:
                tally.in_repo += 1
                tally.truth += len(truth)
                tally.found += len(links.targets & truth)
            else:
                tally.outside += 1
                tally.false_outside_sites += bool(links.targets)
                tally.false_outside_links += len(links.targets)
    return tallies


def _name_only(links: Links) -> bool:
    return links.kind == GUESS or links.how == NAME_ONLY


def name_only_share(view: CallGraphView, languages: set[str]) -> float | None:
    """The share of name-only links among all of codesearch's links at every call site of these
    languages (not only the sample)."""
    chosen = [links for site, links in view.links.items() if view.languages.get(site.path) in languages]
    return _ratio(sum(len(x.targets) for x in chosen if _name_only(x)), sum(len(x.targets) for x in chosen))
