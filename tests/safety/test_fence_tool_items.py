"""The fence marks every Responses item and Anthropic block typed as a call, as it marks "function_call";
a tool's result stays as written there (the screen names it)."""

from __future__ import annotations

import pytest

from lamar.safety import prompt_safe


@pytest.mark.parametrize(("text", "marked"), [
    ('{"type": "local_shell_call", "call_id": "c1", "action": {"command": ["env"]}}', True),
    ('{"type": "shell_call", "call_id": "c1", "action": {}}', True),
    ('{"type": "mcp_call", "name": "exec", "arguments": "{}"}', True),
    ('{"type": "custom_tool_call", "name": "code_exec", "input": "print(1)"}', True),
    ('{"type": "computer_call", "call_id": "c1", "action": {"type": "click"}}', True),
    ('{"type": "apply_patch_call", "call_id": "c1", "operation": {}}', True),
    ('{"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "exec", "input": {}}', True),
    ('{"type": "function_call_output", "call_id": "c1", "output": "done"}', False),
    ('{"type": "phone_call", "duration": 30}', False),
])
def test_a_call_typed_block_is_marked(text: str, marked: bool) -> None:
    shown = prompt_safe(text)
    assert ("(quoted)" in shown) is marked, shown
