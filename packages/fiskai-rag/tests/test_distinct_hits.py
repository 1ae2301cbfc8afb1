"""Distinct hits: a section copied across version trees is one hit (and one pack item) naming its copies."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fiskai_rag import open_store
from fiskai_rag.index._fingerprint import fingerprint
from fiskai_rag.store._db import CHUNKER_VERSION

_PAGE = """# Configure the data node

## max-series-per-database

The maximum number of [series]({base}/concepts/glossary/#series) allowed per database before writes are
dropped. The default setting is `1000000` (one million). Change the setting to `0` to allow an unlimited
number of series per database. If a point causes the number of series in a database to exceed the
limit, {{{{< product-name >}}}} will not write the point and returns a `500` error.
"""


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    for tree in ("influxdb/v1", "enterprise_influxdb/v1", "influxdb/v2"):
        (docs / tree).mkdir(parents=True)
        (docs / tree / "config.md").write_text(_PAGE.format(base=f"/{tree}"), encoding="utf-8")
    (docs / "other.md").write_text(
        "# Retention\n\n## Shard groups\n\nSeries are dropped when their shard group expires.\n", encoding="utf-8"
    )
    return docs


def test_fingerprint_ignores_link_targets_shortcodes_comments_and_whitespace() -> None:
    one = fingerprint("A > B\n\nSee [the docs](/v1/x/) for {{< product-name >}}.\n<!-- note -->\nDone.")
    two = fingerprint("A > B\n\nSee  [the docs](/cloud/y/)\nfor {{% product-name %}}. Done.")

    assert one is not None and one == two
    assert fingerprint("A > C\n\nSee [the docs](/v1/x/) for. Done.") != one  # another section
    assert fingerprint("See the docs (/v1/x/) for. Done.") != fingerprint("See the docs (/v2/x/) for. Done.")
    assert fingerprint("<!-- only a comment -->") is None


def test_copies_across_version_trees_are_one_hit_listing_the_others(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        hits = store.search("max-series-per-database default series", top_k=5).hits

    copies = [h for h in hits if "config.md" in h.citation]
    assert len(copies) == 1
    hit = copies[0]
    assert hit.also_total == 2
    cited = {hit.citation, *hit.also}
    assert cited == {
        "docs/influxdb/v1/config.md#0",
        "docs/enterprise_influxdb/v1/config.md#0",
        "docs/influxdb/v2/config.md#0",
    }
    assert any(h.citation == "docs/other.md#0" for h in hits)  # the freed slot holds distinct content


def test_a_pack_delivers_one_copy_and_says_where_else_it_is(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        pack = store.context("max-series-per-database default", budget=1500)

    delivered = [c for c in pack.citations if "config.md" in c]
    assert len(delivered) == 1
    also = pack.receipt["also"][delivered[0]]
    assert len(also) == 2 and all(c.endswith("config.md#0") for c in also)
    assert "also at " in pack.text


def test_a_store_chunked_by_an_older_chunker_is_rechunked_on_the_next_index_run(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    store_dir = tmp_path / "store"
    with open_store(store_dir, read_only=False) as store:
        store.index([str(docs)])
    db = sqlite3.connect(str(store_dir / "knowledge.db"))
    db.execute("UPDATE rag_meta SET value = '1' WHERE key = 'chunker_version'")
    db.execute("UPDATE chunks SET fingerprint = NULL")
    db.commit()
    db.close()

    with open_store(store_dir, read_only=False) as store:
        rerun = store.index([str(docs)])
        again = store.index([str(docs)])

    assert (rerun.updated, rerun.skipped) == (4, 0)  # same bytes, re-chunked once
    assert (again.updated, again.skipped) == (0, 4)
    db = sqlite3.connect(str(store_dir / "knowledge.db"))
    version = db.execute("SELECT value FROM rag_meta WHERE key = 'chunker_version'").fetchall()[0][0]
    unprinted = db.execute("SELECT count(*) FROM chunks WHERE fingerprint IS NULL").fetchall()[0][0]
    db.close()
    assert version == str(CHUNKER_VERSION)
    assert unprinted == 0


def test_near_identical_sections_stating_different_figures_stay_two_hits(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    body = (
        "The write-ahead log is flushed to object storage on a fixed schedule, and a write is acknowledged "
        "only after its batch reaches durable storage; the interval is {n} milliseconds by default and it "
        "bounds how much acknowledged data a single ingester failure can ever put at risk."
    )
    for name, n in (("serverless", 100), ("dedicated", 30)):
        (docs / f"{name}.md").write_text(f"# Durability\n\n## Flush interval\n\n{body.format(n=n)}\n", encoding="utf-8")
    (docs / "same.md").write_text(
        f"# Durability\n\n## Flush interval\n\n{body.format(n=100).replace('fixed', 'set')}\n", encoding="utf-8"
    )
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        hits = store.search("write-ahead log flush interval milliseconds", top_k=5).hits

    by_path = {hit.path: hit for hit in hits}
    assert set(by_path) <= {"docs/serverless.md", "docs/dedicated.md", "docs/same.md"}
    assert "docs/dedicated.md" in by_path  # 30 ms is another fact than 100 ms: not folded
    folded = by_path.get("docs/serverless.md") or by_path["docs/same.md"]
    assert len(hits) == 2 and folded.also_total == 1  # one word reworded, same figures: one hit


def test_copies_titled_after_their_product_are_one_hit_and_pages_named_apart_stay_apart(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    section = "## Retention check\n\nExpired shard groups are removed every 30 minutes by default.\n"
    for product in ("OSS", "Enterprise"):
        (docs / f"{product.lower()}.md").write_text(
            f"---\ntitle: Configure InfluxDB {product}\n---\n\n{section}", encoding="utf-8"
        )
    for name in ("alpha", "beta"):
        (docs / f"{name}.md").write_text(f"# Widget {name}\n\nA widget appears here.\n", encoding="utf-8")
    with open_store(tmp_path / "store", read_only=False) as store:
        store.index([str(docs)])
        retention = store.search("expired shard groups removed", top_k=5).hits
        widgets = store.search("widget appears", top_k=5).hits

    assert [h.heading_path for h in retention] == ["Configure InfluxDB Enterprise > Retention check"]
    assert retention[0].also == ("docs/oss.md#0",)
    assert sorted(h.path for h in widgets) == ["docs/alpha.md", "docs/beta.md"]  # their titles are the difference
