"""Where documentation generators put their content, as data (trafilatura style).

``extract.py`` walks ``GENERATORS`` in order: the first rule whose ``generator`` text is
in ``<meta name=generator>`` or one of whose ``markers`` matches claims the page; its
first matching ``content`` selector is the content region, ``drop`` lists chrome inside
that region, ``nav`` the containers of the site's own navigation links. Specific themes
come before the generic rule of their generator (furo before plain Sphinx). When no
generator is recognised, ``STRUCTURAL`` selectors are tried, then readability.

Every selector is CSS. ``markers`` and ``drop`` must be simple compounds
(``tag#id.class[attr=value]``, no combinators): they are matched in one pass over
the tree (``extract.SelectorSet``). ``content`` and ``nav`` may be any CSS; a ``nav``
entry that is a group ("a, b") yields its links in document order, while separate
entries are alternatives. Rules must stay general: a selector earns its place by
describing a generator, never one page.

Generator knowledge that is code, not selectors (each a generic transform that a named
generator happens to need; none is keyed to a generator, so all run on every site):

- ``annotate.py``: code languages from ``language-``/``lang-``/``highlight-``/``brush-``
  classes and ``data-lang``, Sphinx's ``default`` lexer read as python, rustdoc's bare
  ``rust`` class; Sphinx signatures (``dt.sig``, ``.descname``).
- ``extract.py``: ``<br>`` line ends in ``<pre>`` (Docusaurus), line-number tables
  (Pygments ``linenos=table``, gtk-doc listings), nested ``<pre>`` (mdBook playgrounds),
  headings that link to themselves (mdBook, Javadoc), bulleted lists of sections
  (Javadoc member summaries).
- ``markdown.py``: signatures and inline code holding links (Sphinx, mkdocs), spacer
  rows (Doxygen ``tr.separator``), layout tables (Sphinx's genindex), inlined data-URI
  images (Docusaurus).
- ``convert.py``: a page that opens with an h2 takes it as its title (mdBook).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GeneratorRule:
    name: str
    content: tuple[str, ...]
    markers: tuple[str, ...] = ()
    generator: str = ""  # lower-case text looked for in <meta name=generator content>
    drop: tuple[str, ...] = ()
    nav: tuple[str, ...] = ()
    # Layout lists (a ul/ol used to stack sections): their items become plain blocks.
    unwrap_lists: tuple[str, ...] = ()
    # Table rows that are section headings (Doxygen's member tables): the table is split
    # there and the row's content stands between the parts as a heading.
    heading_rows: tuple[str, ...] = ()
    # Generators without a site-wide sidebar: the links of a page's own table of
    # contents (its children, in order). The page's nav is then: the page before it
    # (``SEQUENCE_PREV``), the page itself, these links, the page after it.
    toc: tuple[str, ...] = ()


# Chrome that no generator means as content, removed from every region.
COMMON_DROP: tuple[str, ...] = (
    "script",
    "style",
    "noscript",
    "template",
    "link",
    "meta",
    "button",
    "input",
    "select",
    "textarea",
    "form",
    "dialog",
    "nav",
    "footer",
    "[role=search]",
    "[role=navigation]",
    ".skip-link",
    ".skip-to-content",
    "a.headerlink",
    "a.header-anchor",
    "a.hash-link",
    "a.anchorjs-link",
    "a.permalink",
    ".copybtn",
    ".copy-button",
    ".clipboard-copy",
    ".edit-this-page",
    ".edit-page-link",
    "a.edit-link",
    ".theme-edit-this-page",
    ".prev-next-area",
    ".pagination-nav",
    ".rst-footer-buttons",
    ".related-pages",
    ".breadcrumbs",
    ".breadcrumb",
    "[aria-label=breadcrumbs]",
    "#cookie-banner",
    ".cookie-banner",
    ".cookie-consent",
    ".cookies-notice",
    "#searchbox",
    ".searchbox",
    ".search-box",
)

# Sphinx's own markup, shared by all its themes.
_SPHINX_DROP = (
    "td.linenos",
    "span.linenos",
    ".contents.local",
    ".toc-backref-marker",
    ".viewcode-link",
    ".viewcode-back",
)
_SPHINX_MARKERS = (
    "script#documentation_options",
    "link[rel=index]",
    "div.sphinxsidebar",
    "div.bodywrapper",
)
_SPHINX_NAV = (
    ".sphinxsidebarwrapper .toctree-l1 > a",
    ".sphinxsidebar .toctree-l1 > a",
    ".toctree-wrapper a.reference.internal",
)

GENERATORS: tuple[GeneratorRule, ...] = (
    GeneratorRule(
        name="sphinx-furo",
        markers=("div.sidebar-tree", "aside.sidebar-drawer"),
        content=("article[role=main]",),
        drop=_SPHINX_DROP + (".edit-this-page", ".view-this-page", ".content-icon-container"),
        nav=(".sidebar-tree a.reference",),
    ),
    GeneratorRule(
        name="sphinx-pydata",
        # nav#bd-docs-nav, main.bd-content: theme 0.7-0.8 (Bootstrap 4 layout)
        markers=("nav.bd-docs-nav", "div.bd-container", "main.bd-main", "nav#bd-docs-nav"),
        content=(
            "article.bd-article",
            "main.bd-main .bd-content",
            "main#main-content",
            "main.bd-content",
        ),
        drop=_SPHINX_DROP + (".header-article", ".bd-sidebar-secondary", ".prev-next-footer"),
        nav=("nav.bd-docs-nav a.reference", "nav#bd-docs-nav a.reference", ".bd-sidenav a"),
    ),
    GeneratorRule(
        name="readthedocs",  # sphinx_rtd_theme, and MkDocs' theme of the same look
        markers=("div.wy-nav-content", "div.rst-content", "nav.wy-nav-side"),
        content=("div[itemprop=articleBody]", ".rst-content div[role=main]", ".rst-content"),
        drop=_SPHINX_DROP + (".rst-breadcrumbs-buttons", ".wy-breadcrumbs"),
        nav=(".wy-menu-vertical a.reference", ".wy-menu a"),
    ),
    GeneratorRule(
        name="sphinx-celery",  # sphinx_celery: a version banner ("deck") atop the body
        markers=("div.deck",),
        content=("div.body[role=main]", "div.body"),
        drop=_SPHINX_DROP + (".deck",),
        nav=_SPHINX_NAV,
    ),
    GeneratorRule(
        name="sphinx",  # alabaster, classic, pallets, celery, nature, haiku, agogo...
        markers=_SPHINX_MARKERS,
        generator="sphinx",
        # #yui-main: the djangodocs theme (Django and its ecosystem), YUI grid layout.
        content=(
            "div.body[role=main]",
            "div.body",
            "div[role=main]",
            "main",
            "#yui-main div.yui-b",
        ),
        drop=_SPHINX_DROP,
        nav=_SPHINX_NAV,
    ),
    GeneratorRule(
        name="mkdocs-material",
        markers=("div.md-container", "div.md-content"),
        generator="mkdocs-material",
        content=("article.md-content__inner", "div.md-content"),
        drop=(
            "a.md-content__button",
            ".md-source-file",
            ".md-feedback",
            ".md-clipboard",
            ".md-footer",
            ".md-top",
        ),
        nav=("nav.md-nav--primary a.md-nav__link",),
    ),
    GeneratorRule(
        name="mkdocs",
        markers=("div.bs-sidebar", "#mkdocs_search_modal", "#mkdocs-search-query"),
        generator="mkdocs",
        content=("div[role=main]", "main", "#main-content"),
        drop=(".bs-sidebar",),
        # One group: top-level links and dropdown items interleave in reading order.
        nav=(".navbar-nav a.dropdown-item, .navbar-nav > li > a.nav-link:not(.dropdown-toggle)",),
    ),
    GeneratorRule(
        name="docusaurus",
        markers=("#__docusaurus", "div.theme-doc-markdown"),
        generator="docusaurus",
        # A category's generated index: a header and a grid of cards (hashed CSS-module
        # class names, hence the substring match), no markdown of its own.
        content=(
            "article .theme-doc-markdown",
            "div.markdown",
            "div[class*=generatedIndexPage]",
            "article",
        ),
        drop=(
            ".theme-doc-breadcrumbs",
            ".theme-doc-toc-mobile",
            ".theme-doc-footer",
            ".theme-doc-version-badge",
            ".theme-doc-version-banner",
        ),
        nav=("nav.menu a.menu__link", ".theme-doc-sidebar-menu a.menu__link"),
    ),
    GeneratorRule(
        name="mdbook",
        markers=("ol.chapter", "#menu-bar", "div#mdbook-help-container"),
        generator="mdbook",
        content=("#content main", "main"),
        drop=(".nav-chapters", ".mobile-nav-chapters", ".buttons", "a.test-arrow"),
        nav=("#sidebar ol.chapter a", ".sidebar ol.chapter a"),
    ),
    GeneratorRule(
        name="vitepress",
        markers=("#VPContent", "div.VPDoc"),
        generator="vitepress",
        content=(".vp-doc", "main"),
        drop=("span.lang", "button.copy", ".VPDocFooter", ".edit-info", ".prev-next"),
        nav=("aside.VPSidebar a", "nav#VPSidebarNav a"),
    ),
    GeneratorRule(
        name="gitbook",
        markers=(".book-summary", "div.book-body"),
        generator="gitbook",
        content=(".markdown-section", "section.normal", "main"),
        drop=(".navigation", ".book-header"),
        nav=(".book-summary .summary a",),
    ),
    GeneratorRule(
        name="rustdoc",
        markers=("body.rustdoc", "div.sidebar-elems"),
        generator="rustdoc",
        # body: a standalone page (``rustdoc page.md``) has no container of its own.
        content=("#main-content", "main", "body.rustdoc"),
        drop=(
            "#versioninfo",
            "a.test-arrow",
            "a.srclink",
            "a.src",
            ".rightside",
            ".out-of-band",
            "a.anchor",
            "#copy-path",
            ".example-line-numbers",
            "pre.src-line-numbers",
            "pre.line-numbers",
            "summary.hideme",
            ".tooltip",
        ),
        nav=("nav.sidebar .sidebar-elems a", "nav.sidebar a"),
    ),
    GeneratorRule(
        name="javadoc",
        markers=("div.contentContainer", "body.class-declaration-page", "nav#navbar-top"),
        generator="javadoc",
        content=("main[role=main]", "div.contentContainer"),
        drop=(".subNav", ".topNav", ".bottomNav", ".sub-nav", ".table-tabs"),
        nav=("div.indexContainer a",),
        # The overview lists the packages, each package summary its classes (Javadoc
        # 17: grids of divs; 8-11: tables). Class pages have no list of their own.
        toc=(
            "body.package-index-page .summary-table .col-first a",
            "body.package-declaration-page #class-summary .col-first a",
            "table.overviewSummary .colFirst a",
            "table.typeSummary .colFirst a",
            "table.packagesSummary .colFirst a",
        ),
        unwrap_lists=(
            "ul.block-list",
            "ul.member-list",
            "ul.summary-list",
            "ul.details-list",
            "ul.blockList",
            "ul.blockListLast",
        ),
    ),
    GeneratorRule(
        name="doxygen",
        markers=("div#doc-content", "div#nav-tree", "div.navpath"),
        generator="doxygen",
        content=("div.contents",),
        # span.icona: the lettered icon ("C", "N") glued to each name in index tables.
        drop=(".navpath", "#nav-path", "span.icona", "span.arrow"),
        nav=("#nav-tree a", "div.directory a"),
        heading_rows=("tr.heading", "td[colspan] > h2", "td[colspan] > h3"),
    ),
    GeneratorRule(
        name="pdoc",
        markers=("nav.pdoc", "main.pdoc"),
        generator="pdoc",
        content=("main.pdoc", "main"),
        drop=(".pdoc-button", ".view-source-button", "details.source"),
        nav=("nav.pdoc a",),
    ),
    GeneratorRule(
        name="gtk-doc",  # DocBook XSL output with gtk-doc's own navigation and footer
        generator="gtk-doc",
        content=("body",),
        drop=("table.navigation", "div.footer", ".navheader", ".navfooter"),
        toc=("div.toc a",),
    ),
    GeneratorRule(
        name="docbook",
        markers=("div.navheader", "div.navfooter"),
        generator="docbook",
        # Chunked pages: navheader, one div.chapter/section/refentry..., navfooter.
        content=("body",),
        drop=(".navheader", ".navfooter"),
        # The book/index page's .toc lists every chapter and section; a chapter's lists
        # its sections; <link rel=prev/next> chain the chunks in document order.
        toc=("div.toc a",),
    ),
    GeneratorRule(
        name="asciidoc",  # AsciiDoc (Python) and Asciidoctor: same page layout
        markers=("div#footer-text",),
        generator="asciidoc",
        # #header holds the h1 and, in manual pages, the NAME section: content too.
        content=("body",),
        drop=("#footer", "#toc", "#toctitle", "a.anchor"),
        nav=("#toc a",),
    ),
    GeneratorRule(
        name="hugo-docs",  # Docsy, hugo-book, learn, geekdoc
        markers=("div.td-content", "article.book-article", "#body-inner", ".gdoc-markdown"),
        generator="hugo",
        content=(
            ".td-content",
            "article.markdown",
            "#body-inner",
            ".gdoc-markdown",
            "main article",
            "main",
        ),
        drop=(".td-page-meta", ".book-footer", ".td-toc", ".feedback--title", ".td-byline"),
        nav=("#td-sidebar-menu a", "nav.book-menu a", "#sidebar a", ".gdoc-nav a"),
    ),
)

# No generator recognised: the page's own structure says where the content is.
STRUCTURAL: tuple[str, ...] = ("main", "[role=main]", "article", "#main-content", "#content")

# Site navigation when the generator gave none (or none matched).
GENERIC_NAV: tuple[str, ...] = ("nav a", "[role=navigation] a", "aside a")

# The pages before and after this one in the generator's own sequence (DocBook, Sphinx,
# rustdoc books...): HTML's link types, then DocBook's navheader access keys.
SEQUENCE_PREV: tuple[str, ...] = (
    "head link[rel=prev]",
    "head link[rel=previous]",
    "div.navheader a[accesskey=p]",
)
SEQUENCE_NEXT: tuple[str, ...] = ("head link[rel=next]", "div.navheader a[accesskey=n]")

# Admonition boxes, whatever the generator calls them; the title holds the label.
ADMONITION: tuple[str, ...] = (
    "div.admonition",
    "aside.admonition",
    "div.theme-admonition",
    "div.markdown-alert",
    "div.custom-block",  # VitePress ::: containers
    "details.custom-block",
    # Material for MkDocs' collapsible admonitions (pymdownx.details): <details class=kind>
    "details.note",
    "details.abstract",
    "details.info",
    "details.tip",
    "details.success",
    "details.question",
    "details.warning",
    "details.failure",
    "details.danger",
    "details.bug",
    "details.example",
    "details.quote",
    "div.callout",
    "div.alert",
    "div.note",
    "div.warning",
    "div.tip",
    "div.important",
    "div.caution",
)
# The element inside an admonition that names it ("Note", "Warning", a custom title).
ADMONITION_TITLE: tuple[str, ...] = (
    ".admonition-title",
    ".markdown-alert-title",
    ".alert-title",
    ".callout-title",
    ".custom-block-title",
    "summary",
    "[class*=admonitionHeading]",
    ".title",
)



@dataclass(frozen=True)
class TabSet:
    """Tabbed content: only one panel shows at a time, but all of it is content. The
    labels (radio labels, buttons, list items) are paired with the panels in order and
    each panel is written after its label, so no tab's text is lost or left nameless."""

    container: str
    label: str
    panels: tuple[str, ...]  # alternatives: the first with one panel per label wins


TAB_SETS: tuple[TabSet, ...] = (
    # Material for MkDocs (pymdownx.tabbed): alternate style, then the classic one.
    TabSet("div.tabbed-set", "label", ("div.tabbed-block", "div.tabbed-content")),
    TabSet("div.sphinx-tabs", "button.sphinx-tabs-tab", ("div.sphinx-tabs-panel",)),
    TabSet("div.sd-tab-set", "label.sd-tab-label", ("div.sd-tab-content",)),
    TabSet("div.tab-set", "label", ("div.tab-content",)),  # sphinx-inline-tabs (furo's)
    TabSet("div.tabs-container", "li[role=tab]", ("div[role=tabpanel]",)),  # Docusaurus
    TabSet("div.vp-code-group", "div.tabs label", ("div.blocks > div",)),  # VitePress
)

# Tables laid out as CSS grids of divs (Javadoc >= 16): container, column count.
GRID_TABLES: tuple[tuple[str, int], ...] = (
    ("div.two-column-summary", 2),
    ("div.three-column-summary", 3),
    ("div.four-column-summary", 4),
)
GRID_HEADER_CLASS = "table-header"

# Extractor confidence by kind of rule.
QUALITY_GENERATOR = 1.0
QUALITY_TEMPLATE = 0.8
QUALITY_STRUCTURAL = 0.7
QUALITY_READABILITY = 0.4
