#!/usr/bin/env python3
"""Every item a feature adds carries its feature label in the rendered docs.

Usage: doc_labels.py ALL_FEATURES_DOC NO_FEATURES_DOC  (two target/doc/toolhost
directories, both rendered with `--cfg docsrs` by nightly rustdoc).

An item page present only in the all-features render, or a method, impl or
associated item present only there on a page both renders share, must show
rustdoc's "Available on crate feature ... only". Blanket and auto-trait impls
are the dependencies' business (schemars adds DynClone to every Clone type)
and are left out. Exits 1 naming every unlabelled item.
"""

import os
import re
import sys

ANCHOR = re.compile(r'<section id="((?:method|tymethod|associatedconstant|associatedtype|impl)[^"]*)"')
LABEL = re.compile(r'Available on <strong>[^<]*crate feature')
REDIRECT = 'http-equiv="refresh"'


def pages(root):
    found = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                if REDIRECT not in text:
                    found[os.path.relpath(path, root)] = text
    return found


def own_part(text):
    # Blanket and auto-trait impls come last on a page; they are not ours.
    cut = len(text)
    for marker in ('id="synthetic-implementations"', 'id="blanket-implementations"'):
        at = text.find(marker)
        if at != -1:
            cut = min(cut, at)
    return text[:cut]


def anchors(text):
    """Each item anchor with the text up to the end of its summary, where
    rustdoc puts the label."""
    text = own_part(text)
    spans = {}
    for m in ANCHOR.finditer(text):
        end = text.find("</summary>", m.end())
        spans[m.group(1)] = text[m.start() : end if end != -1 else len(text)]
    return spans


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    everything, bare = pages(sys.argv[1]), pages(sys.argv[2])
    missing, checked = [], 0
    for page, text in sorted(everything.items()):
        if page.startswith("src/") or page in ("all.html",):
            continue
        if page not in bare:
            checked += 1
            # The item's own label sits above its first docblock.
            if not LABEL.search(text.split('class="docblock"', 1)[0]):
                missing.append(page)
            continue
        ours, theirs = anchors(text), anchors(bare[page])
        for anchor in sorted(set(ours) - set(theirs)):
            # rustdoc labels the methods of an inherent impl block, not the
            # block (impl-Tool-1); a trait impl (impl-X-for-Y) is labelled.
            if anchor.startswith("impl-") and "-for-" not in anchor:
                continue
            checked += 1
            if not LABEL.search(ours[anchor]):
                missing.append(f"{page}#{anchor}")
    print(f"{checked} feature-gated items or pages checked, {len(missing)} without a feature label")
    for item in missing:
        print(f"  no feature label: {item}")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
