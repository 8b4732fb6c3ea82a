"""When to merge segments: a tiered policy, the rule Lucene and tantivy follow in spirit.

Segments are grouped into tiers by their number of live documents: tier ``t`` holds the sizes in
``[floor · ratio^t, floor · ratio^(t+1))`` (everything under ``floor`` is tier 0). When a tier holds
``segments_per_tier`` segments, its smallest ones are merged into one, which lands a tier up; so each
document is rewritten about ``log_ratio(N / floor)`` times over the index's life, and a query visits
at most about ``segments_per_tier`` segments per tier. A segment whose deleted share passes
``max_deleted_share`` is rewritten on its own, so deleted documents stop costing disk and posting reads.
Merging never changes a score (:mod:`rlsi.retrieval.live`): statistics are applied at query time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..._validation import check_number

__all__ = ["TieredMergePolicy"]


@dataclass(frozen=True)
class TieredMergePolicy:
    """segments_per_tier : merge this many segments of one tier (Lucene's default is 10);
    tier_ratio : size factor between tiers; floor_docs : segments below this size are all tier 0;
    max_deleted_share : rewrite a segment with a larger share of deleted documents."""

    segments_per_tier: int = 10
    tier_ratio: float = 10.0
    floor_docs: int = 1000
    max_deleted_share: float = 0.3

    def __post_init__(self):
        check_number("segments_per_tier", self.segments_per_tier, low=2, integer=True)
        check_number("tier_ratio", self.tier_ratio, low=1.5)
        check_number("floor_docs", self.floor_docs, low=1, integer=True)
        check_number("max_deleted_share", self.max_deleted_share, low=0.0, high=1.0)

    def tier(self, live_docs):
        if live_docs < self.floor_docs:
            return 0
        return 1 + int(math.floor(math.log(live_docs / self.floor_docs, self.tier_ratio)))

    def select(self, segments):
        """Disjoint groups of segment names to merge, from ``segments``: ``(name, live_docs, all_docs)``
        each. A group of one is a rewrite that drops deleted documents."""
        tiers = {}
        for name, live, total in segments:
            tiers.setdefault(self.tier(live), []).append((live, name))
        groups, chosen = [], set()
        for t in sorted(tiers):
            members = sorted(tiers[t])
            if len(members) >= self.segments_per_tier:
                group = [name for _, name in members[: self.segments_per_tier]]
                groups.append(group)
                chosen.update(group)
        for name, live, total in segments:
            if name not in chosen and total and (total - live) / total > self.max_deleted_share:
                groups.append([name])
        return groups
