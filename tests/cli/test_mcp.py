"""`rehydrate mcp` (cli/mcp.py): the server started with the state folder and the actor the user named, and, where
the official SDK (an optional extra) is not installed, a usage error that says how to install it."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from rehydrate.cli import main


def test_the_server_gets_the_folder_and_the_actor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[tuple[str | None, str | None]] = []
    fake = types.ModuleType("rehydrate.mcp_server")
    fake.serve = lambda folder, actor: served.append((folder, actor)) or 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rehydrate.mcp_server", fake)
    monkeypatch.delattr("rehydrate.mcp_server", raising=False)
    assert main(["mcp", "--dir", str(tmp_path), "--actor", "bob"]) == 0
    assert main(["mcp"]) == 0
    assert served == [(str(tmp_path), "bob"), (None, None)]


def test_without_the_sdk_it_is_a_usage_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rehydrate.mcp_server", None)  # the import fails as without the extra
    monkeypatch.delattr("rehydrate.mcp_server", raising=False)
    assert main(["mcp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rehydrate: the MCP server needs the official mcp SDK, which is not installed"), err
    assert "mcp>=2.3,<3" in err and "Traceback" not in err
