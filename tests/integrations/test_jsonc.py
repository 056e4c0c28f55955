"""ynm.integrations.jsonc: members merged into JSON and JSONC text, every other byte kept."""

from __future__ import annotations

import json

import json5
import pytest

from ynm.integrations.jsonc import JsoncError, loads, merge

OPENCODE = """{
  // opencode settings, edited by hand
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight", /* the dark one */
  "mcp": {
    "github": {
      "type": "remote",
      "url": "https://api.example.com/mcp", // company proxy
    },
  },
}
"""


def test_merge_into_jsonc_keeps_comments_and_trailing_commas():
    out = merge(OPENCODE, {"mcp": {"ynm": {"type": "local", "command": ["ynm", "serve"]}}})
    value = json5.loads(out)
    assert value["mcp"]["ynm"] == {"type": "local", "command": ["ynm", "serve"]}
    assert value["mcp"]["github"]["url"] == "https://api.example.com/mcp"
    assert value["theme"] == "tokyonight"
    for line in OPENCODE.splitlines():  # every original line is still there, in order
        assert line in out.splitlines()
    lines = out.splitlines()
    assert [lines.index(x) for x in OPENCODE.splitlines()] == sorted(
        lines.index(x) for x in OPENCODE.splitlines())


def test_merging_the_same_patch_twice_changes_nothing():
    patch = {"mcp": {"ynm": {"type": "local", "command": ["ynm", "serve"], "enabled": True}}}
    once = merge(OPENCODE, patch)
    assert merge(once, patch) == once


def test_a_changed_value_is_replaced_in_place():
    text = '{\n  "a": {"ynm": {"url": "http://old"}}, // note\n  "b": 2\n}\n'
    out = merge(text, {"a": {"ynm": {"url": "http://new"}}})
    assert json5.loads(out) == {"a": {"ynm": {"url": "http://new"}}, "b": 2}
    assert out.endswith('}}, // note\n  "b": 2\n}\n')


@pytest.mark.parametrize(("text", "expected_indent"), [
    ('{\n\t"a": 1\n}', '\n\t"b"'),
    ('{\n    "a": 1\n}\n', '\n    "b"'),
])
def test_new_members_are_indented_like_their_neighbours(text, expected_indent):
    out = merge(text, {"b": {"c": [1]}})
    assert json.loads(out) == {"a": 1, "b": {"c": [1]}}
    assert expected_indent in out


def test_crlf_files_keep_crlf():
    out = merge('{\r\n  "a": 1\r\n}\r\n', {"b": {"c": 2}})
    assert json.loads(out) == {"a": 1, "b": {"c": 2}}
    assert "\n" not in out.replace("\r\n", "")


def test_one_line_objects_and_empty_text():
    assert merge('{"a": {"x": 1}}', {"a": {"y": 2}}) == '{"a": {"x": 1, "y": 2}}'
    assert json.loads(merge("", {"a": 1})) == {"a": 1}
    assert json.loads(merge("{}", {"a": {"b": 1}})) == {"a": {"b": 1}}


def test_loads_agrees_with_json5_and_rejects_what_is_not_jsonc():
    assert loads(OPENCODE) == json5.loads(OPENCODE)
    with pytest.raises(JsoncError, match="offset"):
        loads('{"a": 1,, }')
    with pytest.raises(JsoncError):
        merge("[1, 2]", {"a": 1})
