"""Masking by default on the pages (issue 28, "what to build" 1): every ``{{ variable }}`` of
every template under templates/ reaches the page through the reader's redactor (the ``shown``
filter heads its filter chain, and the variables its filters take are masked too) unless it is
declared safe with ``|plain``; and no tag prints a variable in a way the masking cannot see.
A new template variable is masked without anyone remembering it; a new way of printing one
fails here until someone decides about it."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.template import loader
from django.template.base import Node, TextNode, VariableNode
from django.template.library import SimpleNode

from console.access.template_masking import is_masked, is_plain

TEMPLATES = Path(settings.BASE_DIR) / "templates"

#: Tags that print nothing of a variable's value: control flow, composition, comments, and
#: URLs, static paths and csrf fields the console builds (ids and hex fingerprints in paths).
SILENT_NODES = {
    "TextNode", "IfNode", "ForNode", "BlockNode", "ExtendsNode", "IncludeNode", "WithNode", "LoadNode",
    "CommentNode", "CsrfTokenNode", "URLNode", "StaticNode", "SpacelessNode", "AutoEscapeControlNode",
}
#: Simple tags that print code-made HTML or text (manage_command: the command line that runs a
#: management command here), or the reader's own query string.
PRINTING_TAGS = {"htmx_script", "django_htmx_script", "querystring", "manage_command"}
#: Variables declared safe (``|plain``): each is made by code. A new one is a decision: add it here.
DECLARED_PLAIN = {
    ("base.html", "csrf_token|plain"),
    # drf-spectacular's views give them: static paths of its sidecar and the schema's URL.
    ("api/swagger_ui.html", "swagger_ui_css|plain"),
    ("api/swagger_ui.html", "swagger_ui_bundle|plain"),
    ("api/swagger_ui.html", "schema_url|plain"),
    # The provider's end_session_endpoint with our client id, the ID token it issued and our own
    # sign-in URL (console.security.oidc.sign_out), navigated to by a meta refresh: exact or useless.
    ("registration/signed_out.html", "provider_logout_url|plain"),
}


def template_names() -> list[str]:
    return sorted(str(path.relative_to(TEMPLATES)) for path in TEMPLATES.rglob("*.html"))


def nodes(name: str) -> list[Node]:
    return loader.get_template(name).template.nodelist.get_nodes_by_type(Node)


def test_there_are_templates_to_check():
    assert len(template_names()) > 30 and "web/group.html" in template_names()


def test_every_variable_is_masked_or_declared_plain():
    unmasked, plain = [], set()
    for name in template_names():
        for node in nodes(name):
            if isinstance(node, VariableNode):
                expression = node.filter_expression
                if is_plain(expression):
                    plain.add((name, expression.token))
                elif not is_masked(expression):
                    unmasked.append(f"{name}: {{{{ {expression.token} }}}}")
    assert unmasked == []
    assert plain == DECLARED_PLAIN


def test_no_tag_prints_a_variable_past_the_mask():
    printing = []
    for name in template_names():
        for node in nodes(name):
            kind = type(node).__name__
            if isinstance(node, (TextNode, VariableNode)) or kind in SILENT_NODES:
                continue
            if isinstance(node, SimpleNode) and (node.target_var or node.func.__name__ in PRINTING_TAGS):
                continue
            printing.append(f"{name}: {kind} {getattr(node, 'token', '')}")
    assert printing == []
