"""MkDocs hooks for Berth's documentation site: two pages made at build time.

* ``index.md`` is the repository's README, its links rewritten to point inside the
  site, so the front page and the README are one text and cannot drift apart.
* ``reference/api.md`` is the HTTP API, rendered from the daemon's own OpenAPI schema
  (:func:`berth.api.app.openapi_schema`, the one ``/openapi.json`` serves): every
  route with its parameters, body and answers, and every schema's fields. A route or
  field added to the code is in the next build.

Both are generated files in MkDocs's sense: nothing is written into ``docs/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("get", "post", "put", "patch", "delete")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "index.md", content=front_page()))
    files.append(File.generated(config, "reference/api.md", content=api_reference()))
    return files


def front_page() -> str:
    """The README with its ``docs/...`` links made relative to the site's root."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.sub(r"\]\(docs/", "](", text)


def api_reference() -> str:
    """The HTTP API as Markdown: the routes by tag, then the schemas."""
    from berth.api.app import openapi_schema

    schema = openapi_schema()
    lines = [
        "# HTTP API reference",
        "",
        "Generated from the daemon's OpenAPI schema at every build of this site; a running",
        "daemon serves the same schema at `/openapi.json` and an explorer at `/docs`.",
        "",
        schema["info"].get("description", ""),
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, operations in schema["paths"].items():
        for method in METHODS:
            if method in operations:
                operation = operations[method]
                tag = (operation.get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append((method, path, operation))
    for tag, routes in by_tag.items():
        lines += [f"## {tag.capitalize()}", ""]
        for method, path, operation in routes:
            lines += _route(method, path, operation)
    lines += ["## Schemas", ""]
    for name, component in sorted(schema["components"]["schemas"].items()):
        lines += _schema(name, component)
    return "\n".join(lines) + "\n"


def _route(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", "", operation.get("summary", ""), ""]
    if operation.get("description"):
        lines += [operation["description"], ""]
    if not operation.get("security") and not path.startswith("/v1/agents"):
        lines += ["No token needed.", ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
        for parameter in parameters:
            lines.append(
                f"| `{parameter['name']}` | {parameter['in']} | {_type(parameter['schema'])} "
                f"| {'yes' if parameter.get('required') else 'no'} "
                f"| {_cell(parameter.get('description', ''))}{_limits(parameter['schema'])} |"
            )
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines += [f"Body ({media}): {_type(content.get('schema', {}))}", ""]
    answers = operation.get("responses", {})
    if answers:
        lines += ["| answer | meaning | body |", "|---|---|---|"]
        for code, answer in answers.items():
            content = answer.get("content", {})
            shape = next((_type(c.get("schema", {})) for c in content.values()), "")
            lines.append(f"| {code} | {_cell(answer.get('description', ''))} | {shape} |")
        lines.append("")
    return lines


def _schema(name: str, component: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if component.get("description"):
        lines += [_cell(component["description"]), ""]
    if "enum" in component:
        lines += ["One of " + ", ".join(f"`{v}`" for v in component["enum"]) + ".", ""]
    properties = component.get("properties", {})
    if properties:
        required = set(component.get("required", []))
        lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
        for field, spec in properties.items():
            lines.append(
                f"| `{field}` | {_type(spec)} | {'yes' if field in required else 'no'} "
                f"| {_cell(spec.get('description', ''))}{_limits(spec)} |"
            )
        lines.append("")
    return lines


def _type(spec: dict[str, Any]) -> str:
    """A schema's type as a reader says it, with a link to a named schema."""
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for union in ("anyOf", "oneOf"):
        if union in spec:
            kinds = [_type(s) for s in spec[union] if s.get("type") != "null"]
            nullable = any(s.get("type") == "null" for s in spec[union])
            return " or ".join(kinds) + (" or null" if nullable else "")
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if kind == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"map of {_type(spec['additionalProperties'])}"
    return str(kind)


def _limits(spec: dict[str, Any]) -> str:
    bounds = [
        f"{word} {spec[key]}"
        for key, word in (
            ("minimum", "≥"),
            ("maximum", "≤"),
            ("minLength", "length ≥"),
            ("maxLength", "length ≤"),
            ("maxItems", "items ≤"),
        )
        if key in spec and spec[key] < 2**62
    ]
    return f" ({', '.join(bounds)})" if bounds else ""


def _cell(text: str) -> str:
    """Text fit for one table cell: one line, no column bars."""
    return " ".join(str(text).split()).replace("|", "\\|")
