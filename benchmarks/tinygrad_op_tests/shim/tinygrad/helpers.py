import contextlib
import os
import types


def getenv(key, default=0):
    return type(default)(os.getenv(key, default))


DEBUG = 0
IMAGE = 0
DEV = types.SimpleNamespace(interface="", renderer="", device="CPU")


@contextlib.contextmanager
def Context(**kw):
    yield
