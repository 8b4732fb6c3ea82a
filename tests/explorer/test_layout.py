"""The topic map: classical MDS against a plain-numpy reference, and distances that suit signed topics."""

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import RLSIError
from rlsi.explorer.layout import (classical_mds, document_correlations, similarity_distances, topic_cosines,
                                  topic_map)


def torgerson(D, n=2):
    """Classical MDS written out: double centring by the centring matrix J, the n largest eigenpairs."""
    K = D.shape[0]
    J = np.eye(K) - np.ones((K, K)) / K
    B = -0.5 * J @ (D ** 2) @ J
    values, vectors = np.linalg.eigh(B)
    top = np.argsort(values)[::-1][:n]
    return vectors[:, top] * np.sqrt(np.maximum(values[top], 0))


def pairwise(P):
    return np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))


def test_points_in_the_plane_are_recovered_exactly():
    rng = np.random.default_rng(0)
    P = rng.normal(size=(12, 2))
    coords, kept = classical_mds(pairwise(P))
    np.testing.assert_allclose(pairwise(coords), pairwise(P), atol=1e-10)
    assert kept == pytest.approx(1.0)


def test_matches_the_reference_up_to_the_sign_of_each_axis():
    rng = np.random.default_rng(1)
    D = pairwise(rng.normal(size=(30, 6)))
    coords, kept = classical_mds(D)
    ref = torgerson(D)
    for j in range(2):
        sign = np.sign(coords[:, j] @ ref[:, j])
        np.testing.assert_allclose(coords[:, j], sign * ref[:, j], atol=1e-9)
        big = np.argmax(np.abs(coords[:, j]))
        assert coords[big, j] > 0  # the fixed sign: largest-magnitude coordinate positive
    B = -0.5 * (np.eye(30) - 1 / 30) @ (D ** 2) @ (np.eye(30) - 1 / 30)
    values = np.linalg.eigvalsh(B)[::-1]
    assert kept == pytest.approx(values[:2].sum() / values[values > 0].sum())


def test_small_and_degenerate_inputs():
    assert classical_mds(np.zeros((1, 1)))[0].shape == (1, 2)
    coords, kept = classical_mds(np.zeros((4, 4)))  # every topic in one place
    assert np.all(coords == 0) and kept == 0.0
    coords, _ = classical_mds(np.array([[0.0, 2.0], [2.0, 0.0]]))
    assert pairwise(coords)[0, 1] == pytest.approx(2.0)
    with pytest.raises(RLSIError, match="square"):
        classical_mds(np.zeros((2, 3)))
    with pytest.raises(RLSIError, match="NaN"):
        classical_mds(np.array([[0.0, np.nan], [np.nan, 0.0]]))


def test_a_topic_means_the_same_with_its_signs_flipped():
    rng = np.random.default_rng(2)
    C = rng.normal(size=(6, 40)) * (rng.random((6, 40)) < 0.3)
    flipped = C.copy()
    flipped[[1, 4]] *= -1  # (-u_k, -v_k) is the same model
    np.testing.assert_allclose(topic_cosines(flipped), topic_cosines(C), atol=1e-12)
    np.testing.assert_allclose(topic_map(flipped)[0], topic_map(C)[0], atol=1e-9)
    np.testing.assert_allclose(topic_cosines(sp.csr_matrix(C)), topic_cosines(C), atol=1e-12)


def test_cosines_and_distances_of_oriented_rows():
    C = np.array([[1.0, 1.0, 0.0, 0.0],
                  [-2.0, -2.0, 0.0, 0.0],   # the same topic, mostly negative
                  [0.0, 0.0, 3.0, 0.0],
                  [0.0, 0.0, 0.0, 0.0]])     # dead
    G = topic_cosines(C)
    assert G[0, 1] == pytest.approx(1.0) and G[0, 2] == 0.0 and G[3, 0] == 0.0 and G[3, 3] == 1.0
    D = similarity_distances(G)
    assert D[0, 1] == pytest.approx(0.0, abs=1e-7) and D[0, 2] == pytest.approx(np.sqrt(2))
    assert np.all(np.diag(D) == 0)


def test_document_correlations():
    rng = np.random.default_rng(3)
    V = rng.normal(size=(50, 3))
    V[:, 2] = -2 * V[:, 0] + 1  # perfectly anti-correlated, but oriented negative: the same direction
    G = document_correlations(V, np.array([1.0, 1.0, -1.0]))
    np.testing.assert_allclose(G[0, 1], np.corrcoef(V[:, 0], V[:, 1])[0, 1], atol=1e-12)
    assert G[0, 2] == pytest.approx(1.0)
    coords, _, _ = topic_map(np.eye(3), V, distance="documents")
    assert coords.shape == (3, 2)
    with pytest.raises(RLSIError, match="needs documents"):
        topic_map(np.eye(3), None, distance="documents")
    with pytest.raises(RLSIError, match="choose one of"):
        topic_map(np.eye(3), None, distance="words")
