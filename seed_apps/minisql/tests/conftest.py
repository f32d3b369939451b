"""Shared fixtures: an empty database and a small shop database with users and orders."""

import pytest

from minisql import Database

SHOP_SCRIPT = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, city TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER, product TEXT, qty INTEGER, price REAL);
INSERT INTO users VALUES
    (1, 'ann', 31, 'oslo'), (2, 'bob', 25, 'rome'), (3, 'cy', NULL, 'oslo'),
    (4, 'dee', 42, NULL), (5, 'eve', 25, 'rome');
INSERT INTO orders VALUES
    (10, 1, 'pen', 2, 1.5), (11, 1, 'ink', 1, 7.0), (12, 2, 'pen', 5, 1.5),
    (13, 4, 'pad', 3, 4.0), (14, 9, 'pen', 1, 1.5), (15, 2, 'pad', NULL, 4.0);
"""


@pytest.fixture
def db():
    """A fresh, empty database."""
    return Database()


@pytest.fixture
def shop():
    """A database with five users and six orders (one order has no matching user)."""
    database = Database()
    database.execute_script(SHOP_SCRIPT)
    return database


def rows(database, sql):
    """Run ``sql`` and return its rows."""
    return database.execute(sql).rows
