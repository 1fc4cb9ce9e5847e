"""Every relative link of the README and docs/ reaches a file, and a heading when it names one."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page):
    """GitHub's heading anchors of a Markdown page (fenced code skipped, repeats numbered)."""
    seen, out, fence = {}, set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else re.match(r"^#{1,6} (.*)$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return out


def links(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [url for url in LINK.findall(text) if not url.startswith(("http://", "https://", "mailto:"))]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page):
    broken = []
    for url in links(page):
        path, _, anchor = url.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{url}: no file")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{url}: no heading")
    assert not broken, broken


def test_the_split_guides_have_an_index_naming_every_page():
    for guide in ("fairband", "mlflow", "fairlof"):
        folder = ROOT / "docs" / guide
        index = (folder / "README.md").read_text()
        pages = {p.name for p in folder.glob("*.md")} - {"README.md"}
        assert pages and all(f"]({name})" in index for name in pages), guide
