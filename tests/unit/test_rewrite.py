"""Link rewriting, headings and anchors: the markdown surgery behind docs.md and pages/."""

from __future__ import annotations

import random

import pytest
from mdcrawl.rewrite import (
    _ATX,
    Slugger,
    github_slug,
    headings,
    iter_lines,
    map_text,
    plain_text,
    relevel,
    rewrite_links,
    segments,
    url_key,
)

PAGE = "https://docs.example.org/guide/install.html"


def to_anchor(url: str) -> str | None:
    """Rewrites links to the one known page, leaves everything else alone."""
    return "#install" if url_key(url) == url_key(PAGE) else None


def test_inline_links_images_and_titles_are_rewritten() -> None:
    md = f'See [install]({PAGE} "Install it") and ![shot]({PAGE}) and [x](https://other.org/).'
    out = rewrite_links(md, to_anchor)
    assert out == (
        'See [install](#install "Install it") and ![shot](#install) and [x](https://other.org/).'
    )


def test_link_text_with_code_and_nested_image_is_handled() -> None:
    md = f"[`pip install`]({PAGE}) and [![badge](https://img.example/b.svg)]({PAGE})"
    out = rewrite_links(md, to_anchor)
    assert out == "[`pip install`](#install) and [![badge](https://img.example/b.svg)](#install)"


def test_angle_bracket_destinations_reference_definitions_autolinks_and_href() -> None:
    md = f"[a](<{PAGE}>)\n[ref]: {PAGE} 'title'\nsee <{PAGE}>\n<td><a href=\"{PAGE}\">x</a></td>\n"
    out = rewrite_links(md, to_anchor).splitlines()
    assert out == [
        "[a](<#install>)",
        "[ref]: #install 'title'",
        f"see [{PAGE}](#install)",
        '<td><a href="#install">x</a></td>',
    ]


@pytest.mark.parametrize(
    "code",
    [
        f"```python\nrequests.get('[x]({PAGE})')\n```\n",
        f"~~~\n[x]({PAGE})\n~~~\n",
        f"> ```\n> [x]({PAGE})\n> ```\n",
        f"- item\n\n    ```\n    [x]({PAGE})\n    ```\n",
        f"````md\n```\n[x]({PAGE})\n```\n````\n",
    ],
)
def test_fenced_code_is_never_touched(code: str) -> None:
    md = f"[before]({PAGE})\n\n{code}\n[after]({PAGE})\n"
    out = rewrite_links(md, to_anchor)
    assert code in out
    assert out.startswith("[before](#install)")
    assert out.rstrip().endswith("[after](#install)")


def test_inline_code_is_never_touched() -> None:
    md = f"Use `[x]({PAGE})` or ``a `[y]({PAGE})` b`` but [z]({PAGE})."
    out = rewrite_links(md, to_anchor)
    assert f"`[x]({PAGE})`" in out
    assert f"``a `[y]({PAGE})` b``" in out
    assert out.endswith("[z](#install).")


def test_unclosed_fence_runs_to_the_end() -> None:
    md = f"```\n[x]({PAGE})\n"
    assert rewrite_links(md, to_anchor) == md


def test_map_text_round_trips_when_nothing_changes() -> None:
    md = "# T\n\n```\ncode `x`\n```\ntext `y` more\n~~~\nz\n~~~\n"
    assert map_text(md, lambda text: text) == md


@pytest.mark.parametrize(
    "other",
    [
        "HTTPS://Docs.Example.org:443/guide/install.html#section",
        "https://docs.example.org/guide/install.html",
    ],
)
def test_url_key_matches_equivalent_urls(other: str) -> None:
    assert url_key(other) == url_key(PAGE)


def test_url_key_reads_index_html_as_directory_and_keeps_query() -> None:
    assert url_key("http://h/a/index.html") == url_key("http://h/a/")
    assert url_key("http://h/a/?v=1") != url_key("http://h/a/?v=2")
    assert url_key("http://h:8080/a") != url_key("http://h/a")


def test_headings_skip_code_and_closing_hashes() -> None:
    md = "# Title #\n\ntext\n\n```bash\n# not a heading\n```\n## Usage\n####### seven\n#nospace\n"
    assert headings(md) == [(1, "Title"), (2, "Usage")]


def test_relevel_shifts_caps_and_leaves_code() -> None:
    md = "# One\n## Two\n###### Six\n```\n# shell comment\n```\n"
    assert relevel(md, 1) == "## One\n### Two\n###### Six\n```\n# shell comment\n```\n"


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello World!", "hello-world"),
        ("`requests.get()` and **kwargs**", "requestsget-and-kwargs"),
        ("What's new in 2.0?", "whats-new-in-20"),
        ("__init__", "init"),
        ("`__init__`", "__init__"),
        ("snake_case name", "snake_case-name"),
        ("Café & crème", "café--crème"),
        ("[Linked](https://x.org/) title", "linked-title"),
        ("A\\_b", "a_b"),
    ],
)
def test_github_slugs(heading: str, slug: str) -> None:
    assert github_slug(plain_text(heading)) == slug


def test_slugger_suffixes_repeats_like_github() -> None:
    slugger = Slugger()
    slugs = [slugger.slug(text) for text in ("API", "API", "API-1", "API")]
    assert slugs == ["api", "api-1", "api-1-1", "api-2"]


@pytest.mark.parametrize(
    "markdown",
    [
        "```py\na\n```\nb",
        "x\n````\n```\n````\ny",
        "> ```\n> code\n> ```\ntext",
        "```\nunclosed",
        "~~~\n```\n~~~\nz",
        "```a`b\nnot a fence: backtick in the info string",
        "  ```\n  c\n  ```",
        "a\r\n```\r\nc\r\n```\r\nd",
        "- item\n\n    ```sh\n    $ run\n    ```\n- next",
    ],
)
def test_segments_read_fences_exactly_as_iter_lines(markdown: str) -> None:
    def merged(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        for text, in_code in pieces:
            if out and out[-1][1] == in_code:
                out[-1] = (out[-1][0] + text, in_code)
            else:
                out.append((text, in_code))
        return out

    assert merged(segments(markdown)) == merged(list(iter_lines(markdown)))


def _headings_line_by_line(markdown: str) -> list[tuple[int, str]]:
    """The plain reading ``headings`` must agree with: the ATX pattern on every line."""
    found = []
    for line, in_code in iter_lines(markdown):
        match = None if in_code else _ATX.match(line.rstrip("\r\n"))
        if match:
            found.append((len(match["hashes"]), (match["text"] or "").strip()))
    return found


def _relevel_line_by_line(markdown: str, shift: int) -> str:
    out = []
    for line, in_code in iter_lines(markdown):
        match = None if in_code else _ATX.match(line.rstrip("\r\n"))
        if match:
            level = min(6, len(match["hashes"]) + shift)
            ending = line[len(line.rstrip("\r\n")) :]
            line = f"{match['indent']}{'#' * level} {(match['text'] or '').strip()}{ending}"
        out.append(line)
    return "".join(out)


def test_headings_and_relevel_read_every_line_as_the_atx_pattern_does() -> None:
    """The fast paths (heading lines found first, each read without the pattern's lazy
    text) agree with the pattern line by line on random documents of awkward lines."""
    rng = random.Random(13)
    pieces = ["#", "##", "#######", " ", "   ", "    ", "\t", "x", "`", "\u00a0", "# ##"]
    special = ["```", "~~~", "", "> ```", "text", "\x0b# odd space"]
    for _ in range(400):
        lines = [
            "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
            if rng.random() < 0.8
            else rng.choice(special)
            for _ in range(rng.randint(1, 12))
        ]
        markdown = "\n".join(lines) + rng.choice(["", "\n"])
        assert headings(markdown) == _headings_line_by_line(markdown)
        for shift in (1, 3):
            assert relevel(markdown, shift) == _relevel_line_by_line(markdown, shift)


def _awkward_texts(pieces: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def test_link_pattern_without_reference_definitions_finds_the_same_links() -> None:
    """Where no "]:" is, the literal-led pattern finds each link the full one finds:
    same place, same kind, same target (escaped "\\](", "xhref=" and all)."""
    from mdcrawl.rewrite import _LINK, _LINK_NO_REFDEF

    pieces = ["](", "[", "]", "(", ")", "<", ">", "http://a/b", "mailto:x", "href=", "xhref=",
              "\\", "'", '"', " ", "\t", "\n", "é", "_", "<x>", "](<a b>)"]  # fmt: skip
    for text in _awkward_texts(pieces, 4000, 21):
        if "]:" in text:
            continue

        def found(pattern: object, text: str = text) -> list[tuple[int, int, str, str]]:
            return [(m.start(), m.end(), m.lastgroup, m[m.lastgroup]) for m in pattern.finditer(text)]  # type: ignore[attr-defined]

        assert found(_LINK_NO_REFDEF) == found(_LINK), text


def test_code_span_pattern_reads_as_its_lookbehind_led_spelling() -> None:
    import re

    from mdcrawl.rewrite import _CODE_SPAN

    reference = re.compile(
        r"(?<![`\\])(?P<ticks>`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)(?P=ticks)(?!`)", re.S
    )
    pieces = ["`", "``", "```", "\\", "\\`", "a", " ", "\n", "\n\n", " \t\n"]
    for text in _awkward_texts(pieces, 4000, 22):
        spans = [(m.span(), m["ticks"]) for m in _CODE_SPAN.finditer(text)]
        assert spans == [(m.span(), m["ticks"]) for m in reference.finditer(text)], text


def test_irregular_means_other_breaks_or_a_line_led_by_other_white_space() -> None:
    import re

    from mdcrawl.rewrite import _irregular

    breaks = re.compile(r"[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]|^[ \t]*[^\S\n \t]", re.M)
    pieces = ["a", " ", "\t", "\n", "\u00a0", "\r", "\x0b", "\x1f", "\u2028", "\u3000", "#"]
    for text in _awkward_texts(pieces, 4000, 23):
        assert _irregular(text) == (breaks.search(text) is not None), repr(text)


def test_a_fence_closed_by_a_no_break_space_led_line() -> None:
    """``str.strip`` reads "\\u00a0```" as a closing fence (headings, relevel, chunks);
    the link rewriter's reading of fences does not, as before: both kept."""
    markdown = "# T\n\n```\ncode\n\u00a0```\n\n## After [x](https://a.org/)\n"
    assert headings(markdown) == _headings_line_by_line(markdown)
    assert headings(markdown) == [(1, "T"), (2, "After [x](https://a.org/)")]
    assert relevel(markdown, 1).endswith("\n### After [x](https://a.org/)\n")
    assert segments(markdown)[-1] == ("```\ncode\n\u00a0```\n\n## After [x](https://a.org/)\n", True)
    assert rewrite_links(markdown, lambda url: "#x") == markdown  # in code, for the rewriter


def test_links_read_once_are_rewritten_alike_and_their_memory_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``rewrite_links_twice`` remembers each link by its text in the caller's memo: a
    second page with the same links reads as the first, each resolver's answer still put
    in place, and the memo is emptied when full."""
    from mdcrawl import rewrite

    monkeypatch.setattr(rewrite, "_MAX_LINKS", 3)
    md = (
        f"[a](<{PAGE}>) [b]({PAGE}) [c](https://elsewhere.example/x)\n[ref]: {PAGE} 'title'\n"
        f"see <{PAGE}> and <a href='{PAGE}'>x</a>\n"
    )
    other = lambda url: "other.md" if url_key(url) == url_key(PAGE) else None  # noqa: E731
    links: rewrite.LinkMemo = {}
    for _ in range(2):
        one, two = rewrite.rewrite_links_twice(md, to_anchor, other, 0, links)
        assert one == rewrite_links(md, to_anchor)
        assert two == rewrite_links(md, other)
        assert 0 < len(links) <= 3
    assert one.splitlines() == [
        "[a](<#install>) [b](#install) [c](https://elsewhere.example/x)",
        "[ref]: #install 'title'",
        f"see [{PAGE}](#install) and <a href='#install'>x</a>",
    ]


def test_the_first_resolvers_answers_follow_each_page_with_a_shared_memo() -> None:
    """The memo keeps what the second resolver made of a link (it answers the same all
    assembly long) and the first's last rewritten link: a first resolver answering
    otherwise on another page (a link to the page itself) is followed, never a stale
    answer reused."""
    from mdcrawl import rewrite

    md = f"[a]({PAGE}) and [b]({PAGE}#x) and [c](https://elsewhere.example/)\n"
    second = lambda url: "#doc" if url_key(url) == url_key(PAGE) else None  # noqa: E731
    links: rewrite.LinkMemo = {}
    for first in ("one.md", "#self", "one.md", None):
        resolve = lambda url, to=first: to if url_key(url) == url_key(PAGE) else None  # noqa: E731
        one, two = rewrite.rewrite_links_twice(md, resolve, second, 0, links)
        assert one == rewrite_links(md, resolve)
        assert two == rewrite_links(md, second) == md.replace(f"({PAGE}#x)", "(#doc)").replace(
            f"({PAGE})", "(#doc)"
        )


def test_a_texts_stretches_are_read_once_and_shared_unchanged() -> None:
    """``segments`` keeps the last texts' reading: asked again, the same stretches, in a
    tuple no caller can change."""
    markdown = "# T\n\n```py\nx = 1\n```\n\nprose [a](https://a.org/)\n"
    first = segments(markdown)
    assert isinstance(first, tuple)
    assert segments(markdown) is first
    assert segments("".join([markdown])) == first
    assert "".join(text for text, _ in first) == markdown
    assert [in_code for _, in_code in first] == [False, True, False]


def _key_by_urlsplit(url: str) -> str:
    """url_key as it was written before it cut the fragment itself: urlsplit does it all."""
    import re as re_
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, {"http": 80, "https": 443}.get(scheme)) else f"{host}:{port}"
    path = re_.sub(r"/index\.html?$", "/", parts.path or "/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def test_url_key_and_fragment_of_answer_what_urlsplit_answers() -> None:
    """url_key cuts the fragment before its cached work, fragment_of reads it without a
    split: on URLs of every awkward shape (a "#" in the host, the query or twice, tabs and
    line breaks that urlsplit drops, spaces at either end) both agree with urlsplit."""
    from urllib.parse import urlsplit

    from mdcrawl.rewrite import fragment_of, url_key

    rng = random.Random(13)
    pieces = ["http://", "HTTPS://", "h.example", "H.Example", ":80", ":8080", ":x", "[::1]",
              "/", "/a", "/index.html", "/Index.HTM", "?q=1", "?", "#", "#frag", "#a#b",
              "@", " ", "\t", "\n", "\r", "%23", "ü", "\x00", "//"]
    checked = 0
    for _ in range(6000):
        url = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        try:
            expected = _key_by_urlsplit(url)
        except ValueError:
            with pytest.raises(ValueError):
                url_key(url)
        else:
            assert url_key(url) == expected, repr(url)
            assert fragment_of(url) == urlsplit(url).fragment, repr(url)
            checked += 1
    assert checked > 4000
