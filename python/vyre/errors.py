"""errors.py -- vyre's status codes as Python exceptions: VyreError and one subclass per status."""
from . import _lib


class VyreError(Exception):
    """A vyre call failed.

    Attributes: ``status`` (the status name, e.g. ``"VYRE_INVALID_ARGUMENT"``),
    ``code`` (its number), ``native_code`` (the driver's or the OS's code, 0
    when there is none), ``message`` (the whole "what failed: why. Fix: how"
    text) and ``fix`` (the text after "Fix: ", or "" when the message has
    none).  ``str(e)`` is "STATUS: message".
    """

    code = None  # set on each subclass

    def __init__(self, message, code=None, native_code=0):
        if code is None:
            code = type(self).code if type(self).code is not None else _INTERNAL
        self.code = int(code)
        self.status = STATUS_NAMES[self.code] if 0 <= self.code < len(STATUS_NAMES) else \
            "VYRE_UNKNOWN_STATUS"
        self.native_code = int(native_code)
        self.message = message
        at = message.find("Fix:")
        self.fix = message[at + 4:].strip() if at >= 0 else ""
        Exception.__init__(self, "%s: %s" % (self.status, message))


def status_name(code):
    """The name of status `code` ("VYRE_TRAP"); "VYRE_UNKNOWN_STATUS" for an
    unknown one.  code: an int of C int's range (InvalidArgument otherwise)."""
    from ._ints import checked
    return _lib.vyre_status_name(checked(code, "int", "status code",
                                         fix="pass a status number, e.g. e.code")).decode()


def _class_name(status):
    # VYRE_INVALID_ARGUMENT -> InvalidArgument; VYRE_IO -> IOFailure (not
    # to shadow the builtin); VYRE_DRIVER -> DriverError.
    special = {"VYRE_IO": "IOFailure", "VYRE_DRIVER": "DriverError",
               "VYRE_INTERNAL": "InternalError", "VYRE_COMPILE": "CompileError",
               "VYRE_LIMIT": "LimitExceeded", "VYRE_TRAP": "Trap"}
    if status in special:
        return special[status]
    return "".join(w.capitalize() for w in status[len("VYRE_"):].split("_"))


# Python base classes that fit a status, so that `except ValueError` still
# catches bad arguments.
_BASES = {"VYRE_INVALID_ARGUMENT": (ValueError,), "VYRE_OUT_OF_MEMORY": (MemoryError,),
          "VYRE_INVALID_HANDLE": (ValueError,), "VYRE_UNSUPPORTED": (NotImplementedError,)}

STATUS_NAMES = _lib.STATUS_NAMES
_INTERNAL = STATUS_NAMES.index("VYRE_INTERNAL")
BY_CODE = {}
for _code, _status in enumerate(_lib.STATUS_NAMES):
    if _status == "VYRE_OK":
        continue
    _cls = type(_class_name(_status), (VyreError,) + _BASES.get(_status, ()),
                {"code": _code, "__doc__": "%s (%d): %s." % (
                    _status, _code, _lib.vyre_status_text(_code).decode())})
    _cls.__module__ = "vyre"
    BY_CODE[_code] = _cls
    globals()[_cls.__name__] = _cls
VyreError.__module__ = "vyre"

__all__ = ["VyreError", "status_name"] + [c.__name__ for c in BY_CODE.values()]


def error(code, message, native_code=0):
    """The exception for status `code` (its subclass, VyreError for an unknown code)."""
    return BY_CODE.get(int(code), VyreError)(message, code, native_code)


def make(status, message):
    """The exception of status name `status` ("VYRE_IO") raised by the Python layer itself."""
    return error(_lib.STATUS_NAMES.index(status), message)


def invalid(message):
    """An InvalidArgument raised by the Python layer itself (message has its Fix)."""
    return make("VYRE_INVALID_ARGUMENT", message)


def unsupported(message):
    return make("VYRE_UNSUPPORTED", message)


def check(status, err, what=None):
    """Raise the exception for a failed call (status != 0), with err's message."""
    if status == 0:
        return
    msg = err.message.decode("utf-8", "replace") if err is not None else ""
    if not msg:
        msg = "%s failed: %s. Fix: see the backend's log (VYRE_LOG=debug)" % (
            what or "a vyre call", _lib.vyre_status_text(status).decode())
    raise error(status, msg, err.native_code if err is not None else 0)
