#!/usr/bin/env python3
"""Every colour the app draws with is named once (views/palette.h, and the theme and colour-map tables that are
colour definitions themselves): a colour literal anywhere else in src/app or a view folder (src/views) fails this check, naming the file and line.

Usage: check_colours.py SRC_DIR
"""
import pathlib
import re
import sys

# The files that define colours: the palette, the plots' light and dark themes, the app's palettes, the colour maps.
DEFINITIONS = {"app/views/palette.h", "app/views/plottheme.cpp", "app/style/theme.cpp", "app/views/colormaps.cpp"}
LITERAL = re.compile(r"QColor\s*[({]\s*(0x|\d|\"#|Qt::)|Qt::(black|white|red|green|blue|gray|darkGray|lightGray|yellow)\b"
                     r"|\"#[0-9a-fA-F]{6}\"")


def main(src):
    root = pathlib.Path(src)
    problems = []
    for path in sorted(list(root.joinpath("app").rglob("*")) + list(root.joinpath("views").rglob("*"))):
        if path.suffix not in (".cpp", ".h") or path.relative_to(root).as_posix() in DEFINITIONS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//", 1)[0]
            if LITERAL.search(code):
                problems.append("%s:%d: a colour literal outside views/palette.h: %s"
                                % (path.relative_to(root), number, line.strip()))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
