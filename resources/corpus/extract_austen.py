#!/usr/bin/python3
"""Writes pride-and-prejudice.txt from Debian's r-cran-janeaustenr package (Project Gutenberg's text of the
novel, public domain; the R package is MIT-licensed).

    apt-get download r-cran-janeaustenr && dpkg -x r-cran-janeaustenr_*.deb pkg
    resources/corpus/extract_austen.py pkg/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb

Rdata.rdb holds the six novels as zlib-compressed R serialisations (XDR, version 3), each a character vector
of the book's lines; Pride and Prejudice is the fifth. Paragraphs are unwrapped to one line each, so the
character model learns sentences rather than where Gutenberg broke lines.
"""
import os
import struct
import sys
import zlib

STRSXP, CHARSXP = 16, 9


def vectors(db):
    pos = 0
    while pos < len(db):
        inflater = zlib.decompressobj()
        raw = inflater.decompress(db[pos + 4:])
        pos += 4 + len(db) - pos - 4 - len(inflater.unused_data)
        yield strings(raw)


def strings(raw):
    assert raw[:2] == b"X\n", "not an XDR serialisation"
    p = 2 + 3 * 4
    encoding_length = struct.unpack(">i", raw[p:p + 4])[0]
    p += 4 + encoding_length
    flags, count = struct.unpack(">iI", raw[p:p + 8])
    assert flags & 0xFF == STRSXP, "not a character vector"
    p += 8
    lines = []
    for _ in range(count):
        flags, length = struct.unpack(">ii", raw[p:p + 8])
        assert flags & 0xFF == CHARSXP
        p += 8
        lines.append("" if length < 0 else raw[p:p + length].decode("utf-8"))
        p += max(length, 0)
    return lines


def paragraphs(lines):
    current = []
    for line in lines + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            yield " ".join(current)
            current = []


def main():
    books = list(vectors(open(sys.argv[1], "rb").read()))
    novel = books[4]
    assert novel[0] == "PRIDE AND PREJUDICE", novel[0]
    text = "\n".join(paragraphs(novel)) + "\n"
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pride-and-prejudice.txt")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(out, len(text), "characters")


if __name__ == "__main__":
    main()
