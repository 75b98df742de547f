"""Tests of sessions, with a fake Session that stands in for the real one."""


class Session:
    """A fake Session for tests: a Session without a customer, a Session of one item."""

    def __init__(self):
        self.session_items = []


def test_session_summary():
    session = Session()
    assert session.session_items == []


def test_two_sessions():
    assert Session() is not Session()


def test_session_items():
    assert not Session().session_items
