"""What the source checks read of the view folders (src/views/NAME/) and of the spec-key schema, in one place.

check_layers.py, check_spec_keys.py and check_view_docs.py import it (a script's own folder is on Python's path).
"""
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SECTIONS = ("CORE", "WIDGET", "CLI", "CORE_TESTS", "TESTS")


@dataclass
class Folder:
    path: Path
    kind: str  # the descriptor's `.kind`
    after: str  # its `.after`; "" for the first tab
    sources: list  # [(path, text)] of its .cpp and .h files, the tests aside
    widgets: set  # the paths its CMakeLists.txt lists after WIDGET
    own_keys: list = field(default_factory=list)  # the names of the OwnKeys it declares (ViewKind::keys)
    cli: set = field(default_factory=set)  # the paths it lists after CLI (its subcommands)

    @property
    def code(self):
        return "".join(text for _, text in self.sources)


def view_folders(src, check):
    """Every view folder under SOURCE_DIR/views, in the folders' order; exits naming `check` when one has no kind."""
    folders = []
    for path in sorted(p for p in (Path(src) / "views").iterdir() if p.is_dir()):
        sources = [(p, p.read_text(encoding="utf-8")) for p in sorted(path.iterdir())
                   if p.suffix in (".cpp", ".h") and not p.name.startswith("tst_")]
        code = "".join(text for _, text in sources)
        kind = re.search(r'\.kind = "([^"]+)"', code)
        if not kind:
            sys.exit('%s: %s describes no view kind (.kind = "…")' % (check, path))
        after = re.search(r'\.after = "([^"]+)"', code)
        folders.append(Folder(path, kind.group(1), after.group(1) if after else "", sources, widget_files(path),
                              re.findall(r'OwnKey<.*?>\s+k\w+\s*\{"([^"]+)"', code), section_files(path, "CLI")))
    return folders


def widget_files(folder):
    """The files a folder's CMakeLists.txt lists after WIDGET (atlas_view), as paths."""
    return section_files(folder, "WIDGET")


def section_files(folder, wanted):
    """The files a folder's CMakeLists.txt lists after `wanted` (WIDGET, CLI …) in its atlas_view call, as paths."""
    listing = folder / "CMakeLists.txt"
    if not listing.is_file():
        return set()
    words = re.sub(r"#.*", "", listing.read_text(encoding="utf-8")).replace("(", " ").replace(")", " ").split()
    widgets, section = set(), None
    for w in words:
        if w in SECTIONS:
            section = w
        elif section == wanted:
            widgets.add(folder / w)
    return widgets


def entries(text, start_pattern):
    """The brace-balanced entries of a table whose items open with `start_pattern`."""
    for m in re.finditer(start_pattern, text):
        depth, i = 0, m.start()
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        yield text[m.start():i]


def descriptor_key_names(code, own_names):
    """The key names a descriptor's analysisKeys and alsoReads list: "scale", or kCorruptedText.name resolved."""
    names = set()
    for listing in re.findall(r"\.(?:analysisKeys|alsoReads)\s*=\s*\{([^}]*)\}", code):
        names |= set(re.findall(r'"([^"]+)"', listing))
        names |= {own_names.get(k, k) for k in re.findall(r"\b(?:\w+::)*(k\w+)\.name\b", listing)}
    return names


def shared_keys(src, check):
    """The keys of src/core/view/speckeys.cpp: [(name, ViewSpec field or None for an OwnKey, the views that read it or
    None for every view)]. A key marked `.someViews = true` is read by the views whose descriptors name it in
    analysisKeys or alsoReads (as specKeys() lists them)."""
    shared_own = "".join(p.read_text(encoding="utf-8") for p in (Path(src) / "core/view").glob("*.h"))
    named = {}  # key name -> the view kinds whose descriptors name it
    for view in view_folders(src, check):
        own_names = dict(re.findall(r'OwnKey<.*?>\s+(k\w+)\s*\{"([^"]+)"', view.code + shared_own))
        for name in descriptor_key_names(view.code, own_names):
            named.setdefault(name, []).append(view.kind)
    keys = []
    for entry in entries((Path(src) / "core/view/speckeys.cpp").read_text(encoding="utf-8"), r"\{\.name = \""):
        name = re.search(r'\.name = "([^"]+)"', entry).group(1)
        member = re.search(r"&ViewSpec::(\w+)", entry)  # None: a key several views share kept in ViewSpec::own
        member = member.group(1) if member else None
        some = re.search(r"\.someViews = true", entry)
        if some and not named.get(name):
            sys.exit("%s: the key %s is read by some views, and no descriptor names it" % (check, name))
        keys.append((name, member, named[name] if some else None))
    if len(keys) < 20:
        sys.exit("%s: found only %d keys in speckeys.cpp: the table's shape changed" % (check, len(keys)))
    return keys


def statements(text, pattern):
    """The statements (up to the next ';' outside brackets) that start where `pattern` matches."""
    for m in re.finditer(pattern, text):
        depth, i = 0, m.start()
        while i < len(text) and not (text[i] == ";" and depth == 0):
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[i], 0)
            i += 1
        yield text[m.start():i]
