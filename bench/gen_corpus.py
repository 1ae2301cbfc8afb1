"""A seeded generator of a documentation-like Markdown corpus for the knowledge benchmarks.

Run: uv run python bench/gen_corpus.py [--files 10000] [--seed 7] [--mb 70] [--out DIR]

The same seed, file count and size always give byte-identical files. Documents look like product
documentation: YAML front matter, an H1 title, nested H2/H3 sections (some setext), paragraphs drawn
from a Zipf-distributed vocabulary (so BM25 sees realistic term statistics), bullet lists, tables, and
fenced code (backticks and tildes) in several languages. Output goes under bench/.data/, which is
git-ignored; a `.complete` marker makes a finished corpus reusable by bench/knowledge.py.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / ".data"
MARKER = ".complete"
GENERATOR_VERSION = 5
"""Bumped whenever the output changes, so a stale corpus under bench/.data is regenerated."""

_SYLLABLES = (
    "ka ro mi te la su no ve tri pan dor qua lex fin gal mur sto ber chi zen pol vat rin "
    "cor del tam ux op ar en is ul ot rem sab jor kel nim"
).split()
# Real words mixed into the vocabulary, so keyword queries can name something a reader would type.
_TECH = (
    "server client stream consumer producer message subject queue bucket replica cluster leader "
    "snapshot retention backpressure timeout retry token credential account user permission config "
    "deploy upgrade rollback metric latency throughput index query schema table column shard partition "
    "cache memory disk network socket certificate tls key rotation backup restore migration release "
    "version plugin agent tool command flag option default limit quota error warning log trace span "
    "batch buffer flush commit transaction lock writer reader mirror source sink filter header payload "
    "request response endpoint route service container image volume secret policy role group tenant"
).split()
_FUNCTION_WORDS = "the a of to and in is for that with on as by this be are from or it can when you your".split()
_LANGUAGES = ("go", "python", "bash", "yaml", "json", "toml", "sql", "")


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set(_TECH)
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


class _Writer:
    """Draws words, sentences and blocks from one seeded random stream."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng, 30_000)
        # Zipf-Mandelbrot: the r-th word has weight 1 / (r + 30)^1.1, so no content word takes more than
        # about 1% of the text; function words are drawn separately at a fixed rate.
        self.cum = list(itertools.accumulate(1.0 / ((rank + 30) ** 1.1) for rank in range(1, len(self.words) + 1)))

    def terms(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=count)

    def sentence(self) -> str:
        rng = self.rng
        count = rng.randint(6, 22)
        content = self.terms(count)
        out = [w if rng.random() > 0.35 else f"{rng.choice(_FUNCTION_WORDS)} {w}" for w in content]
        if rng.random() < 0.15:
            out[rng.randrange(len(out))] = f"`{self.terms(1)[0]}_{rng.randint(1, 99)}`"
        text = " ".join(out)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", ":"))

    def paragraph(self) -> str:
        lines: list[str] = []
        line = ""
        for _ in range(self.rng.randint(2, 5)):
            sentence = self.sentence()
            # Hard-wrap near 80 columns, as hand-written Markdown usually is.
            for word in sentence.split(" "):
                if line and len(line) + len(word) + 1 > 80:
                    lines.append(line)
                    line = word
                else:
                    line = f"{line} {word}" if line else word
        lines.append(line)
        return "\n".join(lines)

    def code(self) -> str:
        rng = self.rng
        lang = rng.choice(_LANGUAGES)
        fence = "~~~" if rng.random() < 0.2 else "```"
        body: list[str] = []
        for _ in range(rng.randint(3, 18)):
            a, b = self.terms(2)
            indent = "    " * rng.randint(0, 2)
            body.append(f"{indent}{a}_{b} = {rng.choice(('call', 'load', 'new'))}({b!r}, {rng.randint(0, 4096)})")
        return "\n".join([f"{fence}{lang}", *body, fence])

    def bullets(self) -> str:
        return "\n".join(f"- {self.sentence()}" for _ in range(self.rng.randint(2, 6)))

    def table(self) -> str:
        cols = self.rng.randint(2, 4)
        head = self.terms(cols)
        rows = [f"| {' | '.join(head)} |", "|" + "---|" * cols]
        rows.extend(f"| {' | '.join(self.terms(cols))} |" for _ in range(self.rng.randint(2, 6)))
        return "\n".join(rows)

    def block(self) -> str:
        roll = self.rng.random()
        if roll < 0.62:
            return self.paragraph()
        if roll < 0.80:
            return self.code()
        if roll < 0.93:
            return self.bullets()
        return self.table()

    def heading(self, level: int) -> str:
        text = " ".join(self.terms(self.rng.randint(1, 4))).capitalize()
        if level <= 2 and self.rng.random() < 0.1:
            return f"{text}\n{('=' if level == 1 else '-') * len(text)}"
        return f"{'#' * level} {text}"

    def document(self, target: int, doc_id: int) -> str:
        rng = self.rng
        title = " ".join(self.terms(rng.randint(2, 6))).capitalize()
        tags = ", ".join(self.terms(rng.randint(1, 4)))
        parts = [
            f"---\ntitle: {title}\nweight: {rng.randint(1, 500)}\ntags: [{tags}]\nid: doc-{doc_id}\n---",
            f"# {title}",
            self.paragraph(),
        ]
        size = sum(len(p) + 2 for p in parts)
        while size < target:
            level = rng.choice((2, 2, 3, 3, 3, 4))
            section = [self.heading(level)]
            # Short sections, as reference docs have: about 100k chunks from the default 10k files.
            section.extend(self.block() for _ in range(rng.randint(1, 2)))
            parts.extend(section)
            size += sum(len(p) + 2 for p in section)
        return "\n\n".join(parts) + "\n"


def corpus_dir(files: int, seed: int, megabytes: float) -> Path:
    """The folder a corpus with these parameters is generated into."""
    return DATA / f"gen-{files}-s{seed}-{megabytes:g}mb"


def generate(files: int = 10_000, seed: int = 7, megabytes: float = 70.0, out: Path | None = None) -> Path:
    """Generate (or reuse) the corpus; returns its folder."""
    dest = out or corpus_dir(files, seed, megabytes)
    params = {"files": files, "seed": seed, "megabytes": megabytes, "generator": GENERATOR_VERSION}
    marker = dest / MARKER
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")) == params:
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    writer = _Writer(seed)
    mean = megabytes * 1_000_000 / files
    for n in range(files):
        # Log-normal sizes: most pages are short, a few are long (capped below the indexer's 512 KiB limit).
        target = int(min(400_000, max(300.0, writer.rng.lognormvariate(0, 0.8) * mean / 1.40)))
        path = dest / f"section-{n % 20:02d}" / f"topic-{n % 370:03d}" / f"page-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(writer.document(target, n), encoding="utf-8")
    marker.write_text(json.dumps(params), encoding="utf-8")
    return dest


def corpus_bytes(folder: Path) -> int:
    """Total size of the Markdown files under `folder`."""
    return sum(p.stat().st_size for p in folder.rglob("*.md"))


def main() -> None:
    parser = argparse.ArgumentParser(description="Generate the seeded Markdown corpus for bench/knowledge.py.")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mb", type=float, default=70.0, help="approximate total size in megabytes")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    folder = generate(args.files, args.seed, args.mb, args.out)
    elapsed = time.perf_counter() - start
    print(f"{folder}: {args.files} files, {corpus_bytes(folder) / 1e6:.1f} MB ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
