"""Query-text analysis shared by search and context packs: which words of a question are evidence.

A question carries two kinds of words that name nothing to retrieve: function words (`the`, `does`, and
the halves FTS5 cuts contractions into, `don't` -> `don` + `t`) and request scaffolding, the words that
say how something is asked rather than what (`I want`, `is there a way to`, `I am interested in
articles on`). Both are dropped from the FTS5 query of a search and from the ranking terms of a pack,
so the two read a question the same way (packs also drop the seed's closed scaffolding list,
`_temporal.SCAFFOLDING`, which trims a question ahead of its date expression; search keeps its `show`,
`last`, `take`: InfluxQL and SQL words, and adding them to search moved no measured figure). The lists
are general English, not fitted to a question set;
every change to them is measured on CISI, CACM, MED and the influxdata tuning questions (issue 16).

Tried and not kept (same sets; see issue 16's notes): a phrase for each identifier-shaped token beside its
parts (`max-age` -> "max age"), identifier questions 0.818 -> 0.727; the phrase instead of its parts,
the same loss and CACM -0.008; adjacent-word phrases, CISI 0.398 -> 0.354; a phrase of a name and its
version number (`influxdb 3`), paraphrase 0.364 -> 0.273; question forms mapped to answer slots (`how
often` -> interval, `where` -> directory), one paraphrase question gained, by the `where` rule alone
(fitted, not general); heading-vocabulary expansion (frequent words of the headings that match the
query), every set worse (CACM 0.527 -> 0.454, influx all 0.591 -> 0.341); dropping `many`/`much`/`often`
or the word after `how`, keyword questions 0.727 -> 0.636; idioms for a default (`out of the box`, `if I
don't set anything`) read as `by default` or dropped (fourth session), influx tuning nDCG 0.595 -> 0.588
(the Telegraf interval question loses its relevant pages) and no answer gained (CISI, CACM, MED have no
such phrase).

User text never reaches FTS5 as syntax: it is cut into letter/digit terms and each term is quoted, so
quotes, `NEAR`, `column:` filters and operators are plain words.
"""

from __future__ import annotations

import re

__all__ = ["MAX_QUERY_TERMS", "REQUEST_WORDS", "STOPWORDS", "fts_query", "is_filler", "match_terms", "query_terms"]

MAX_QUERY_TERMS = 40
_TERM = re.compile(r"[^\W_]+")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    ain aren couldn didn doesn don hadn hasn haven isn ll mightn mustn needn re shan shouldn ve wasn weren won
    wouldn""".split()
)
"""Function words (NLTK's English list plus `could`, `would`), including the stems FTS5's tokenizer leaves
of negated contractions (`doesn't` -> `doesn`, `t`). They carry almost no BM25 weight but make FTS5 walk
long posting lists. The contraction stems and the reflexive pronouns added to the earlier list changed no
figure on CISI, CACM, MED or the influxdata tuning set (issue 16); they keep `don` and `isn` out of
pack ranking terms, where rarity, not BM25, weights a word."""

REQUEST_WORDS = frozenset(
    """want wants wanted wanna wish wonder wondering tell explain know try trying tried way ways thing things
    stuff anything something everything anyone someone anybody somebody else also just still really actually
    basically please maybe perhaps like interested articles papers describe discuss concerning
    regarding relevant""".split()
)
"""Request scaffolding: wanting and asking verbs, placeholder nouns and pronouns, discourse adverbs, and
the words a written literature request uses (`interested in articles`, `papers that discuss`).

Measured against the function-word list alone (issue 16; search nDCG@10, and the share of influxdata
tuning questions with an answer in the top 5 hits): CACM 0.507 -> 0.527 (the literature-request words),
CISI 0.398 -> 0.397 (MRR 0.654 -> 0.629: two queries where `articles`/`way` were content lose their first
hit), MED 0.686 -> 0.684; influxdata conversational 0.364 -> 0.455 (`still` in "why are old WAL files
still sitting..."), other kinds unchanged. Left out because a question may mean them as content:
`documents` (document stores; CISI 0.397 either way), `need` (information needs), `show` and `last`
(InfluxQL `SHOW`, `last()`), `help`, `even` ("even clock boundaries")."""

_QUOTED = re.compile(r'"([^"]+)"')


def is_filler(word: str) -> bool:
    """Whether a lowercase word names nothing to retrieve: a function word or request scaffolding."""
    return word in STOPWORDS or word in REQUEST_WORDS


def query_terms(text: str) -> list[str]:
    """The lowercase letter/digit terms of 2+ characters of `text` that carry evidence, in order.

    Filler words are dropped when other terms remain; a question made only of them keeps them all, so
    it still finds something. A repeated word is kept once per use (see `fts_query`).
    """
    terms = [term.lower() for term in _TERM.findall(text) if len(term) >= 2]
    content = [term for term in terms if not is_filler(term)]
    return (content or terms)[:MAX_QUERY_TERMS]


def fts_query(text: str) -> str:
    """Turn free text into a safe FTS5 query: the quoted `query_terms` joined with OR.

    A repeated word is kept once per use: FTS5's bm25() sums over the query's phrases, so repetition
    weights the words a question dwells on (on the CISI collection this lifts nDCG@10 from 0.355 with
    de-duplicated terms to 0.398).

    Returns:
        The query, or `""` when the text has no searchable term.
    """
    return " OR ".join(f'"{term}"' for term in query_terms(text))


def match_terms(match: str) -> list[str]:
    """The terms of an `fts_query` output, in order and number (its quoted words)."""
    return _QUOTED.findall(match)
