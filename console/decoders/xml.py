"""XML, laid out for reading (``defusedxml``: no DTD, so no entity expansion and no external
entity; nesting bounded as it is parsed, before any of it is laid out)."""

from __future__ import annotations

import io
from typing import Any
from xml.etree import ElementTree

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from console.decoders.base import MAX_DEPTH, BodyFormat, Said, Unreadable


class Xml(BodyFormat):
    label = "XML"
    content_types = ("application/xml", "text/xml", "application/soap+xml")
    magic = b"<?xml"

    def read(self, body: bytes, said: Said) -> Any:
        root, depth = None, 0
        try:
            for event, element in iterparse(io.BytesIO(body), events=("start", "end"), forbid_dtd=True):
                depth += 1 if event == "start" else -1
                if depth > MAX_DEPTH:
                    raise Unreadable(f"nested deeper than {MAX_DEPTH}")
                root = element if root is None else root
        except (DefusedXmlException, ValueError) as exc:
            raise Unreadable(f"refused: {type(exc).__name__}") from None
        except ElementTree.ParseError as exc:
            raise Unreadable(f"not well-formed XML: {exc}") from None
        if root is None:
            raise Unreadable("no element")
        ElementTree.indent(root, space="  ")
        return ElementTree.tostring(root, encoding="unicode")
