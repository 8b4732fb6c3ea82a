"""The scikit-learn estimator contract of the text vectorizers, tested by hand.

scikit-learn's estimator checks feed numeric arrays, and ``TfidfVectorizer``/``StreamingTfidf`` take
documents (an iterable of str), so the checks cannot run on them. These tests state the parts of the
contract that apply to a transformer of text: parameters stored untouched by ``__init__`` and equal to the
signature's defaults, get_params/set_params/clone round trips, ``fit`` returns self and leaves the
parameters alone, a refit forgets the previous fit, the not-fitted error, ``fit_transform`` equal to
``fit(...).transform``, repr, pickling, and use inside a Pipeline.
"""

import inspect
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.decomposition import TruncatedSVD
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from rlsi.errors import RLSIError
from rlsi.text import StreamingTfidf, TfidfVectorizer

DOCS = ["The government cut cocaine imports.", "Governments govern; the cat sat on a mat.",
        "Cocaine and heroin seizures rose", "A cat and a dog", "", "the the the",
        "Imports of cats from 1987 to 1999", "Stock markets fell as imports rose"]
OTHER = ["Quantum chromodynamics and gluons", "Gluons bind quarks", "Quarks and leptons"]

# non-default values of every parameter (a stemmer, a custom stop list, float32 ...)
NON_DEFAULT = {
    TfidfVectorizer: dict(lowercase=False, stop_words=["foo", "The"], stemmer="english",
                          token_pattern=r"[A-Za-z]+", min_length=2, min_df=0.1, max_df=0.9, max_features=12,
                          norm=None, dtype=np.float32),
    StreamingTfidf: dict(lowercase=False, stop_words=["foo", "The"], stemmer="english",
                         token_pattern=r"[A-Za-z]+", min_length=2, idf="fixed", norm=None, dtype=np.float32),
}
CLASSES = list(NON_DEFAULT)


def estimators():
    """``(class, parameters)`` cases: the defaults and the non-default values, for both classes."""
    out = []
    for cls in CLASSES:
        out.append(pytest.param(cls, {}, id=f"{cls.__name__}-default"))
        out.append(pytest.param(cls, NON_DEFAULT[cls], id=f"{cls.__name__}-custom"))
    return out


def assert_same_matrix(A, B):
    assert sp.issparse(A) and sp.issparse(B)
    assert A.shape == B.shape and A.dtype == B.dtype
    assert (A != B).nnz == 0


# ------------------------------------------------------------------ parameters
@pytest.mark.parametrize("cls", CLASSES)
def test_get_params_follows_the_signature(cls):
    signature = inspect.signature(cls.__init__)
    names = [p for p in signature.parameters if p != "self"]
    params = cls().get_params()
    assert sorted(params) == sorted(names)
    for name in names:
        default = signature.parameters[name].default
        assert params[name] is default or params[name] == default, name
    assert sorted(NON_DEFAULT[cls]) == sorted(names)  # the custom set covers every parameter
    assert all(NON_DEFAULT[cls][k] != params[k] for k in names)


@pytest.mark.parametrize("cls", CLASSES)
def test_init_stores_the_parameters_untouched_and_validates_nothing(cls):
    params = NON_DEFAULT[cls]
    est = cls(**params)
    assert set(vars(est)) == set(params)  # no other attribute is set by __init__
    for name, value in params.items():
        assert getattr(est, name) is value, name
    # validation happens in fit, not in __init__ (so that set_params/clone work on any value)
    bad = cls(stemmer="klingon")
    with pytest.raises(RLSIError, match="stemmer"):
        bad.fit(DOCS)


@pytest.mark.parametrize("cls, params", estimators())
def test_set_params_and_clone_round_trip(cls, params):
    est = cls(**params)
    assert est.set_params(**est.get_params()) is est
    assert est.get_params() == cls(**params).get_params()
    copy = clone(est)
    assert type(copy) is cls and copy is not est and copy.get_params() == est.get_params()
    assert clone(clone(est)).get_params() == est.get_params()
    # a fitted estimator clones to an unfitted one with the same parameters
    est.fit(DOCS)
    fresh = clone(est)
    assert fresh.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    with pytest.raises(ValueError, match="no_such_parameter"):
        est.set_params(no_such_parameter=1)


@pytest.mark.parametrize("cls", CLASSES)
def test_set_params_changes_what_fit_does(cls):
    est = cls()
    assert "the" not in est.fit(DOCS).get_feature_names_out()
    assert est.set_params(stop_words=None) is est
    assert "the" in est.fit(DOCS).get_feature_names_out()


# ------------------------------------------------------------------ fitting
@pytest.mark.parametrize("cls, params", estimators())
def test_fit_returns_self_ignores_y_and_leaves_the_parameters_alone(cls, params):
    est = cls(**params)
    before = {k: (v.copy() if isinstance(v, list) else v) for k, v in est.get_params().items()}
    assert est.fit(DOCS) is est
    assert est.get_params() == before  # a custom stop list is not sorted or lower-cased in place
    check_is_fitted(est)
    with_y = cls(**params).fit(DOCS, y=np.arange(len(DOCS)))
    assert_same_matrix(with_y.transform(DOCS), est.transform(DOCS))


@pytest.mark.parametrize("cls, params", estimators())
def test_fit_transform_equals_fit_then_transform(cls, params):
    together = cls(**params).fit_transform(DOCS)
    apart = cls(**params).fit(DOCS).transform(DOCS)
    assert_same_matrix(together, apart)
    assert together.dtype == np.dtype(params.get("dtype", np.float64))
    assert together.shape == (len(DOCS), len(cls(**params).fit(DOCS).get_feature_names_out()))


@pytest.mark.parametrize("cls, params", estimators())
def test_refit_forgets_the_previous_fit(cls, params):
    refit = cls(**params).fit(OTHER).fit(DOCS)
    fresh = cls(**params).fit(DOCS)
    assert list(refit.get_feature_names_out()) == list(fresh.get_feature_names_out())
    assert refit.vocabulary_ == fresh.vocabulary_ and refit.n_docs_ == fresh.n_docs_
    np.testing.assert_array_equal(refit.df_, fresh.df_)
    assert_same_matrix(refit.transform(OTHER + DOCS), fresh.transform(OTHER + DOCS))
    # fit_transform forgets as well
    assert_same_matrix(cls(**params).fit(OTHER).fit_transform(DOCS), cls(**params).fit_transform(DOCS))


def test_partial_fit_returns_self():
    est = StreamingTfidf()
    assert est.partial_fit(DOCS[:4]) is est and est.partial_fit(DOCS[4:]) is est
    assert est.n_docs_ == len(DOCS)


# ------------------------------------------------------------------ not fitted
@pytest.mark.parametrize("cls", CLASSES)
def test_not_fitted_error(cls):
    est = cls()
    with pytest.raises(NotFittedError):
        check_is_fitted(est)  # scikit-learn's own test: no fitted attribute before fit
    for call in (lambda: est.transform(DOCS), est.get_feature_names_out):
        with pytest.raises(NotFittedError) as info:
            call()
        assert isinstance(info.value, RLSIError)  # one error type, for scikit-learn and for rlsi users
        message = str(info.value)
        assert "\n" not in message and "fit" in message and cls.__name__ in message


# ------------------------------------------------------------------ repr, pickle, pipelines, tags
@pytest.mark.parametrize("cls", CLASSES)
def test_repr_shows_the_changed_parameters(cls):
    assert repr(cls()) == f"{cls.__name__}()"
    assert repr(cls(min_length=3)) == f"{cls.__name__}(min_length=3)"
    assert repr(cls(stemmer="english", norm=None)) == f"{cls.__name__}(norm=None, stemmer='english')"
    est = cls(**NON_DEFAULT[cls])
    text = repr(est)
    assert text.startswith(f"{cls.__name__}(") and "stemmer='english'" in text and "float32" in text
    assert repr(est.fit(DOCS)) == text  # fitting does not change the repr


@pytest.mark.parametrize("cls, params", estimators())
def test_pickle_round_trip_of_a_fitted_vectorizer(cls, params):
    est = cls(**params).fit(DOCS)
    again = pickle.loads(pickle.dumps(est))
    assert again.get_params() == est.get_params()
    assert_same_matrix(again.transform(OTHER + DOCS), est.transform(OTHER + DOCS))


@pytest.mark.parametrize("cls", CLASSES)
def test_in_a_pipeline(cls):
    pipe = Pipeline([("tfidf", cls()), ("svd", TruncatedSVD(n_components=2, random_state=0))])
    params = pipe.get_params(deep=True)
    assert params["tfidf__min_length"] == 1 and params["tfidf__stop_words"] == "english"
    pipe.set_params(tfidf__stop_words=None, tfidf__min_length=2)
    Z = pipe.fit_transform(DOCS)
    assert Z.shape == (len(DOCS), 2)
    X = cls(stop_words=None, min_length=2).fit_transform(DOCS)
    np.testing.assert_allclose(Z, TruncatedSVD(n_components=2, random_state=0).fit_transform(X))
    copy = clone(pipe)
    assert copy.get_params(deep=True)["tfidf__min_length"] == 2
    with pytest.raises(NotFittedError):
        check_is_fitted(copy.named_steps["tfidf"])


@pytest.mark.parametrize("cls", CLASSES)
def test_tags_say_the_input_is_text(cls):
    tags = get_tags(cls())
    assert tags.input_tags.string and not tags.input_tags.two_d_array
