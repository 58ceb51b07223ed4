"""What the drop-in borrows from the official SDK when it is installed: its models (package
``mcp_types`` of ``mcp`` 2.x, or ``mcp.types`` of 1.x) and its exception (``MCPError``, or
1.x's ``McpError``). Without the SDK, results stay plain dicts and errors ringmcp's own.

Everything is looked up lazily: importing ``ringmcp.mcp`` costs no SDK import.
"""

from __future__ import annotations

import functools
import inspect
from types import ModuleType
from typing import Any

from ..errors import RingmcpError


@functools.cache
def types_module() -> ModuleType | None:
    """The SDK's models: ``mcp_types`` (SDK 2.x, needs only pydantic), else ``mcp.types``."""
    try:
        import mcp_types

        return mcp_types
    except ImportError:
        pass
    try:
        import mcp.types as sdk_types

        return sdk_types
    except ImportError:
        return None


def model(name: str) -> Any:
    """The SDK model class ``name``, or ``None``."""
    t = types_module()
    return getattr(t, name, None) if t is not None else None


def to_model(name: str, data: Any) -> Any:
    """``data`` (wire form) as the SDK model ``name`` when the SDK is installed, else as is."""
    cls = model(name)
    if cls is None or data is None:
        return data
    return cls.model_validate(data)


@functools.cache
def _adapter(name: str) -> Any:
    """A pydantic ``TypeAdapter`` for a type alias of the SDK (e.g. the union
    ``ElicitRequestParams``)."""
    target = model(name)
    if target is None:
        return None
    from pydantic import TypeAdapter

    return TypeAdapter(target)


def validate(name: str, data: Any) -> Any:
    """``data`` as the SDK's type ``name`` (a class or a union alias), else as is."""
    cls = model(name)
    if cls is None or data is None:
        return data
    if isinstance(cls, type) and hasattr(cls, "model_validate"):
        return cls.model_validate(data)
    return _adapter(name).validate_python(data)


def dump(value: Any) -> Any:
    """A model (or anything with ``model_dump``) in wire form; other values as they are."""
    dumper = getattr(value, "model_dump", None)
    if dumper is not None and not isinstance(value, type):
        return dumper(by_alias=True, mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [dump(v) for v in value]
    return value


# -- errors ---------------------------------------------------------------------------------


@functools.cache
def mcp_error_class() -> type[Exception] | None:
    """The SDK's exception for JSON-RPC error answers: ``MCPError`` (2.x) or ``McpError`` (1.x)."""
    try:
        from mcp.shared import exceptions
    except ImportError:
        return None
    cls = getattr(exceptions, "MCPError", None) or getattr(exceptions, "McpError", None)
    return cls if isinstance(cls, type) else None


@functools.cache
def _new_style(cls: type) -> bool:
    """Whether ``cls(code, message, data)`` (2.x) rather than ``cls(ErrorData)`` (1.x)."""
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return True
    return "code" in params


def make_mcp_error(code: int, message: str, data: Any = None) -> Exception:
    """The SDK's exception for a JSON-RPC error (a ``RingmcpError`` without the SDK)."""
    cls = mcp_error_class()
    if cls is None:
        return RingmcpError(message, {"code": code, "data": data, "fault": "peer"})
    if _new_style(cls):
        return cls(code, message, data)
    error_data = model("ErrorData")
    fields = {"code": code, "message": message}
    if data is not None:
        fields["data"] = data
    return cls(error_data(**fields))


_ATTRS_OF_BOTH = ("code", "message", "data", "error")


def _mapped_init(self: Any, message: str, details: dict[str, Any] | None = None) -> None:
    # What MCPError.__init__ (2.x) / McpError.__init__ (1.x) do, without their super().__init__
    # call, which here would reach the ringmcp class with the SDK's arguments.
    details = dict(details or {})
    base = mcp_error_class()
    assert base is not None
    code, data = details.get("code"), details.get("data")
    fields: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        fields["data"] = data
    error_data = model("ErrorData")(**fields)
    if _new_style(base):
        BaseException.__init__(self, code, message, data)
    else:
        BaseException.__init__(self, message)
    self.__dict__.update(
        error=error_data,
        fault=details.get("fault"),
        server=details.get("server"),
        _details=details,
    )
    # ringmcp's ``message``/``code``/``data`` are the SDK's properties (from ``error``) in 2.x
    for key in ("message", "code", "data"):
        if not isinstance(inspect.getattr_static(type(self), key, None), property):
            self.__dict__[key] = fields.get(key)


def _mapped_reduce(self: Any) -> Any:
    return (_rebuild, (self._ringmcp_class, self.error.message, self._details))


def _rebuild(original: type, message: str, details: dict[str, Any]) -> Exception:
    return as_mcp_error(original(message, details))


@functools.cache
def _mapped_class(original: type[RingmcpError]) -> type[Exception] | None:
    base = mcp_error_class()
    if base is None:
        return None
    return type(
        original.__name__,
        (base, original),
        {
            "__init__": _mapped_init,
            "__reduce__": _mapped_reduce,
            "__module__": "ringmcp.mcp",
            "_ringmcp_class": original,
            "__qualname__": original.__qualname__,
            "__doc__": f"{original.__doc__ or ''}\n\nAlso the SDK's ``{base.__name__}`` (the drop-in "
            "raises this class where the SDK raises its own).",
        },
    )


_ANSWER = "server returned error: "


def server_message(message: str, code: int) -> str:
    """The server's own error message out of ringmcp's description of its error answer
    (``server "NAME": server returned error: MESSAGE (code N)[, data: ...]``): what the SDK's
    ``MCPError.message`` holds. Other messages are returned unchanged."""
    start = message.find(_ANSWER)
    end = message.rfind(f" (code {code})")
    if start < 0 or end < start + len(_ANSWER):
        return message
    return message[start + len(_ANSWER) : end]


def as_mcp_error(error: BaseException) -> BaseException:
    """A ringmcp error that maps to a JSON-RPC error (it has an integer ``code``) as an instance
    of both the SDK's ``MCPError`` and its own class (``RequestTimeout``, ``PolicyDenied``...),
    so ``except MCPError`` and ``except ringmcp.errors.ServerError`` both catch it. Its
    ``message`` is the server's own (as the SDK's), ``ringmcp_message`` ringmcp's description
    (server name, stderr...). Other exceptions, or any without the SDK installed, are returned
    unchanged."""
    if not isinstance(error, RingmcpError) or not isinstance(getattr(error, "code", None), int):
        return error
    base = mcp_error_class()
    if base is None or isinstance(error, base):
        return error
    cls = _mapped_class(type(error))
    if cls is None:
        return error
    details = dict(getattr(error, "_details", None) or {})
    details.setdefault("code", error.code)
    details.setdefault("data", getattr(error, "data", None))
    message = error.message if isinstance(error.message, str) else str(error)
    try:
        mapped = cls(server_message(message, error.code), details)
    except Exception:  # never let the mapping hide the error
        return error
    for key, value in vars(error).items():
        if key not in _ATTRS_OF_BOTH:
            mapped.__dict__[key] = value
    mapped.__dict__["ringmcp_message"] = message
    mapped.__cause__ = error.__cause__
    mapped.__context__ = error.__context__
    mapped.__suppress_context__ = error.__suppress_context__
    return mapped


def sdk_exception(name: str) -> type[Exception]:
    """``MCPError``/``McpError``: the SDK's class (both names, whichever it defines), else
    ``RingmcpError``."""
    try:
        from mcp.shared import exceptions
    except ImportError:
        return RingmcpError
    cls = getattr(exceptions, name, None)
    if isinstance(cls, type):
        return cls
    return mcp_error_class() or RingmcpError
