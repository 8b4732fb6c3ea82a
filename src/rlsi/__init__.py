"""rlsi: Regularized Latent Semantic Indexing.

Scalable sparse topic models (batch and online RLSI, after Wang, Xu, Li and Craswell, TOIS 2013) with
scikit-learn estimators, and topic-enhanced relevance ranking.
"""

__version__ = "0.1.0"
