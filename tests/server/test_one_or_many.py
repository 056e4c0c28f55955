"""Every array field of every MCP tool takes one value, or a comma-separated string for a
list of strings, as well as a list; the input schema allows both forms and says so. Through
an in-process MCP client session."""

from __future__ import annotations

import pytest

from tests.server.conftest import text

# (tool, field): covered below; the schema test checks this is every array field.
ARRAY_FIELDS = {
    ("memory_remember", "tags"), ("memory_remember", "links"),
    ("memory_supersede", "tags"), ("memory_supersede", "links"),
    ("memory_annotate", "tags"), ("memory_annotate", "links"),
    ("memory_recall", "type"), ("memory_recall", "level"), ("memory_recall", "tags"),
    ("memory_context", "type"), ("memory_context", "level"),
    ("memory_consolidate", "passes"),
}


def _array_fields(schema: dict) -> set[str]:
    out = set()
    for name, prop in schema["properties"].items():
        variants = prop.get("anyOf", [prop])
        if any(v.get("type") == "array" for v in variants):
            out.add(name)
    return out


def test_every_array_field_allows_one_value_in_its_schema(mcp_call):
    tools = {t.name: t for t in mcp_call(lambda c: c.list_tools()).tools}
    found = {(name, field) for name, tool in tools.items()
             for field in _array_fields(tool.input_schema)}
    assert found == ARRAY_FIELDS
    for name, field in found:
        prop = tools[name].input_schema["properties"][field]
        kinds = [v.get("type") or v.get("$ref") for v in prop["anyOf"]]
        if field == "links":
            assert kinds[:2] == ["array", "#/$defs/LinkInput"]
            assert "one object" in prop["description"]
            # strict, as the reference's input schemas (cli.md §1.3): the schema says so
            link = tools[name].input_schema["$defs"]["LinkInput"]
            assert link["additionalProperties"] is False
            assert set(link["properties"]) == {"rel", "to"}
        else:
            assert kinds[:2] == ["array", "string"]
            assert "separated by commas" in prop["description"]


def call(mcp_call, name, args):
    result = mcp_call(lambda c: c.call_tool(name, args))
    assert not result.is_error, text(result)
    return result.structured_content["data"]


def state(service, memory_id):
    return service.run_sync(lambda ynm: ynm.find(memory_id)[1])


def remember(mcp_call, content, **extra):
    args = {"type": "semantic", "content": content, **extra}
    return call(mcp_call, "memory_remember", args)["memoryId"]


@pytest.mark.parametrize("tags, expected", [("solo", ["solo"]), ("a, b,,c", ["a", "b", "c"]),
                                            (["x", "y"], ["x", "y"])])
def test_remember_tags_scalar_comma_or_list(mcp_call, service, tags, expected):
    mid = remember(mcp_call, "tags given many ways", tags=tags)
    assert sorted(state(service, mid)["tags"]) == sorted(expected)


@pytest.mark.parametrize("tool", ["memory_supersede", "memory_annotate"])
@pytest.mark.parametrize("tags, expected", [("one", ["one"]), ("p,q", ["p", "q"])])
def test_supersede_and_annotate_tags(mcp_call, service, tool, tags, expected):
    mid = remember(mcp_call, "to be changed")
    args = {"memoryId": mid, "tags": tags}
    if tool == "memory_supersede":
        args["content"] = "changed"
    call(mcp_call, tool, args)
    assert sorted(state(service, mid)["tags"]) == sorted(expected)


@pytest.mark.parametrize("tool", ["memory_remember", "memory_supersede", "memory_annotate"])
def test_one_link_object_is_a_one_element_list(mcp_call, service, tool):
    target = remember(mcp_call, "link target")
    link = {"rel": "supports", "to": target.lower()}
    if tool == "memory_remember":
        mid = remember(mcp_call, "linked", links=link)
    else:
        mid = remember(mcp_call, "to be linked")
        args = {"memoryId": mid, "links": link}
        if tool == "memory_supersede":
            args["content"] = "now linked"
        call(mcp_call, tool, args)
    links = [lk for lk in state(service, mid)["links"] if lk["rel"] != "supersedes"]
    assert [(lk["rel"], lk["to"]) for lk in links] == [("supports", target)]


def test_recall_type_level_and_tags_scalars(mcp_call):
    how = remember(mcp_call, "walrus deploy steps", type="procedural", tags="ops")
    fact = remember(mcp_call, "walrus deploy day", tags="ops,calendar")
    team = remember(mcp_call, "walrus deploy team rule", level="distributed")

    def ids(**filters):
        return {h["memoryId"] for h in call(mcp_call, "memory_recall", {"text": "walrus", **filters})}

    assert ids(type="procedural") == {how}
    assert ids(type="procedural,semantic") == {how, fact, team}
    assert ids(type="semantic") == {fact, team}
    assert ids(level="distributed") == {team}
    assert ids(level="personal, distributed") == {how, fact, team}
    assert ids(tags="calendar") == {fact}
    assert ids(tags="ops") == {how, fact}


def test_recall_bad_value_in_a_comma_list_is_named(mcp_call):
    result = mcp_call(lambda c: c.call_tool("memory_recall", {"type": "procedural,nonsense"}))
    assert result.is_error
    assert text(result).startswith("invalid input: type.1: ")


def test_context_type_and_level_scalars(mcp_call):
    remember(mcp_call, "heron release checklist", type="procedural")
    remember(mcp_call, "heron team fact", level="distributed")

    def block(**filters):
        return call(mcp_call, "memory_context", {"text": "heron", **filters})["markdown"]

    assert "checklist" in block(type="procedural")
    assert "team fact" not in block(type="procedural")
    assert "team fact" in block(level="distributed")
    assert "checklist" not in block(level="distributed")
    both = block(type="procedural,semantic", level="personal,distributed")
    assert "checklist" in both and "team fact" in both


@pytest.mark.parametrize("passes, expected", [
    ("expire", ["expire", "retention"]),
    ("expire, promote", ["expire", "retention", "promote"])])
def test_consolidate_passes_scalar_or_comma_list(mcp_call, passes, expected):
    call(mcp_call, "memory_remember", {"type": "semantic", "content": "a fresh fact"})
    data = call(mcp_call, "memory_consolidate", {"passes": passes, "dryRun": True})
    assert list(data["passes"]) == expected  # retention reports right after expire
