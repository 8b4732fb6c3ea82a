"""Topic quality: readability and sparsity measures from the paper (§8.2, §8.4.1) and topic coherence.

See :mod:`rlsi.quality.topics` (top terms, AvgComp, representability, overlap, PosContri/NegContri/MR,
text summaries) and :mod:`rlsi.quality.coherence` (UMass and NPMI coherence against a corpus).
"""

from .coherence import (COHERENCE_MEASURES, avg_topic_coherence, co_document_frequencies, npmi_coherence,
                        topic_coherence, umass_coherence)
from .topics import (QUALITY_MEASURES, RANKINGS, avg_compactness, avg_majority_ratio, avg_representability,
                     check_components, compactness, contributions, dominant_sign, format_topics,
                     get_quality_measure, overlap, quality_report, representability, top_term_indices,
                     top_terms, top_terms_with_weights, topic_label, topic_summary)

__all__ = [
    "COHERENCE_MEASURES", "QUALITY_MEASURES", "RANKINGS", "avg_compactness", "avg_majority_ratio",
    "avg_representability", "avg_topic_coherence", "check_components", "co_document_frequencies",
    "compactness", "contributions", "dominant_sign", "format_topics", "get_quality_measure",
    "npmi_coherence", "overlap", "quality_report", "representability", "top_term_indices", "top_terms",
    "top_terms_with_weights", "topic_coherence", "topic_label", "topic_summary", "umass_coherence",
]
