"""Recursive-descent parser producing :mod:`minisql.nodes` trees.

Expression precedence, loosest first::

    OR
    AND
    NOT
    comparison, IS [NOT] NULL, [NOT] BETWEEN, [NOT] IN, [NOT] LIKE
    + - ||
    * / %
    unary + -
    primary (literal, column, function call, CASE, CAST, (subquery), (expr))

Words such as ``NULLS``, ``FIRST``, ``LAST``, ``KEY``, ``TRANSACTION``,
``USING``, ``HASH`` and ``BTREE`` are contextual: they are ordinary identifiers
everywhere except at the point in the grammar where they have a meaning.
"""

from . import nodes as n
from .errors import ParseError
from .lexer import TokenType, tokenize

_COMPARISON_OPS = ("=", "==", "<>", "!=", "<", "<=", ">", ">=")


class Parser:
    """Parser over the token list of one SQL text."""

    def __init__(self, text):
        """Tokenize ``text``; raises :class:`LexError` for malformed input."""
        self.tokens = tokenize(text)
        self.index = 0

    # ------------------------------------------------------------ token helpers

    @property
    def current(self):
        """The token at the cursor (EOF once the input is exhausted)."""
        return self.tokens[self.index]

    def _peek(self, offset=1):
        """Return the token ``offset`` positions after the cursor, or the EOF token."""
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def _advance(self):
        """Consume and return the current token."""
        token = self.current
        if token.type is not TokenType.EOF:
            self.index += 1
        return token

    def _error(self, expected):
        """Build a ParseError describing what was expected and what was found."""
        token = self.current
        found = "end of input" if token.type is TokenType.EOF else repr(token.value)
        return ParseError(f"expected {expected} but found {found} at {token.position}")

    def _accept_keyword(self, *words):
        """Consume the current token if it is one of the keywords ``words``; return it or None."""
        if self.current.is_keyword(*words):
            return self._advance()
        return None

    def _expect_keyword(self, word):
        """Consume keyword ``word`` or raise ParseError."""
        if not self._accept_keyword(word):
            raise self._error(word)

    def _accept_punct(self, char):
        """Consume punctuation ``char`` if present; return True when consumed."""
        if self.current.is_punct(char):
            self._advance()
            return True
        return False

    def _expect_punct(self, char):
        """Consume punctuation ``char`` or raise ParseError."""
        if not self._accept_punct(char):
            raise self._error(repr(char))

    def _accept_word(self, word):
        """Consume a contextual word (an identifier spelled ``word``, any case)."""
        token = self.current
        if token.type is TokenType.IDENT and token.value.lower() == word:
            self._advance()
            return True
        return False

    def _expect_identifier(self, what="identifier"):
        """Consume and return an identifier's name or raise ParseError."""
        if self.current.type is not TokenType.IDENT:
            raise self._error(what)
        return self._advance().value

    # ------------------------------------------------------------ statements

    def parse_script(self):
        """Parse one or more statements separated by ``;`` and return them as a list.

        Empty statements (stray semicolons) are skipped.

        Raises:
            ParseError: on any syntax error, including an empty script.
        """
        statements = []
        while self.current.type is not TokenType.EOF:
            if self._accept_punct(";"):
                continue
            statements.append(self.parse_statement())
            if self.current.type is not TokenType.EOF:
                self._expect_punct(";")
        if not statements:
            raise ParseError("empty SQL text")
        return statements

    def parse_statement(self):
        """Parse a single statement starting at the cursor.

        Raises:
            ParseError: if the leading keyword starts no known statement.
        """
        token = self.current
        if token.is_keyword("SELECT"):
            return self.parse_select()
        if token.is_keyword("INSERT"):
            return self._parse_insert()
        if token.is_keyword("UPDATE"):
            return self._parse_update()
        if token.is_keyword("DELETE"):
            return self._parse_delete()
        if token.is_keyword("CREATE"):
            return self._parse_create()
        if token.is_keyword("DROP"):
            return self._parse_drop()
        if self._accept_keyword("BEGIN"):
            self._accept_word("transaction")
            return n.Begin()
        if self._accept_keyword("COMMIT"):
            return n.Commit()
        if self._accept_keyword("ROLLBACK"):
            return n.Rollback()
        raise self._error("a statement")

    def parse_select(self):
        """Parse a SELECT statement (the cursor must be on ``SELECT``)."""
        self._expect_keyword("SELECT")
        distinct = bool(self._accept_keyword("DISTINCT"))
        if not distinct:
            self._accept_keyword("ALL")
        items = [self._parse_select_item()]
        while self._accept_punct(","):
            items.append(self._parse_select_item())
        from_ = self._parse_from() if self._accept_keyword("FROM") else None
        where = self.parse_expression() if self._accept_keyword("WHERE") else None
        group_by = ()
        if self._accept_keyword("GROUP"):
            self._expect_keyword("BY")
            group_by = tuple(self._parse_expression_list())
        having = self.parse_expression() if self._accept_keyword("HAVING") else None
        order_by = ()
        if self._accept_keyword("ORDER"):
            self._expect_keyword("BY")
            order_by = [self._parse_order_item()]
            while self._accept_punct(","):
                order_by.append(self._parse_order_item())
        limit = self.parse_expression() if self._accept_keyword("LIMIT") else None
        offset = self.parse_expression() if self._accept_keyword("OFFSET") else None
        return n.Select(
            items=tuple(items), from_=from_, where=where, group_by=group_by, having=having,
            order_by=tuple(order_by), limit=limit, offset=offset, distinct=distinct,
        )

    def _parse_select_item(self):
        """Parse ``*``, ``alias.*`` or ``expr [[AS] alias]``."""
        if self.current.is_operator("*"):
            self._advance()
            return n.SelectItem(n.Star())
        if (self.current.type is TokenType.IDENT and self._peek().is_punct(".")
                and self._peek(2).is_operator("*")):
            table = self._advance().value
            self._advance()
            self._advance()
            return n.SelectItem(n.Star(table))
        expr = self.parse_expression()
        return n.SelectItem(expr, self._parse_optional_alias())

    def _parse_optional_alias(self):
        """Parse ``AS name`` or a bare identifier alias; return None when absent."""
        if self._accept_keyword("AS"):
            return self._expect_identifier("alias")
        if self.current.type is TokenType.IDENT:
            return self._advance().value
        return None

    def _parse_order_item(self):
        """Parse ``expr [ASC|DESC] [NULLS FIRST|LAST]``."""
        expr = self.parse_expression()
        descending = False
        if self._accept_keyword("DESC"):
            descending = True
        else:
            self._accept_keyword("ASC")
        nulls_first = None
        if self._accept_word("nulls"):
            if self._accept_word("first"):
                nulls_first = True
            elif self._accept_word("last"):
                nulls_first = False
            else:
                raise self._error("FIRST or LAST")
        return n.OrderItem(expr, descending, nulls_first)

    def _parse_from(self):
        """Parse a FROM clause: table items combined by commas and JOINs (left-assoc)."""
        left = self._parse_table_item()
        while True:
            if self._accept_punct(","):
                left = n.Join(left, self._parse_table_item(), "CROSS")
            elif self._accept_keyword("CROSS"):
                self._expect_keyword("JOIN")
                left = n.Join(left, self._parse_table_item(), "CROSS")
            elif self.current.is_keyword("JOIN", "INNER", "LEFT"):
                kind = "LEFT" if self._accept_keyword("LEFT") else "INNER"
                if kind == "LEFT":
                    self._accept_keyword("OUTER")
                else:
                    self._accept_keyword("INNER")
                self._expect_keyword("JOIN")
                right = self._parse_table_item()
                self._expect_keyword("ON")
                left = n.Join(left, right, kind, self.parse_expression())
            else:
                return left

    def _parse_table_item(self):
        """Parse ``name [[AS] alias]`` or ``(SELECT ...) [AS] alias``.

        Raises:
            ParseError: if a derived table has no alias.
        """
        if self._accept_punct("("):
            query = self.parse_select()
            self._expect_punct(")")
            alias = self._parse_optional_alias()
            if alias is None:
                raise self._error("alias for derived table")
            return n.SubqueryRef(query, alias)
        name = self._expect_identifier("table name")
        return n.TableRef(name, self._parse_optional_alias())

    def _parse_insert(self):
        """Parse ``INSERT INTO t [(cols)] VALUES (...), (...)`` or ``INSERT INTO t [(cols)] SELECT``."""
        self._expect_keyword("INSERT")
        self._expect_keyword("INTO")
        table = self._expect_identifier("table name")
        columns = ()
        if self._accept_punct("("):
            columns = tuple(self._parse_identifier_list())
            self._expect_punct(")")
        if self.current.is_keyword("SELECT"):
            return n.Insert(table, columns, query=self.parse_select())
        self._expect_keyword("VALUES")
        rows = []
        while True:
            self._expect_punct("(")
            rows.append(tuple(self._parse_expression_list()))
            self._expect_punct(")")
            if not self._accept_punct(","):
                return n.Insert(table, columns, rows=tuple(rows))

    def _parse_update(self):
        """Parse ``UPDATE t SET col = expr, ... [WHERE expr]``."""
        self._expect_keyword("UPDATE")
        table = self._expect_identifier("table name")
        self._expect_keyword("SET")
        assignments = []
        while True:
            column = self._expect_identifier("column name")
            if not self.current.is_operator("="):
                raise self._error("'='")
            self._advance()
            assignments.append((column, self.parse_expression()))
            if not self._accept_punct(","):
                break
        where = self.parse_expression() if self._accept_keyword("WHERE") else None
        return n.Update(table, tuple(assignments), where)

    def _parse_delete(self):
        """Parse ``DELETE FROM t [WHERE expr]``."""
        self._expect_keyword("DELETE")
        self._expect_keyword("FROM")
        table = self._expect_identifier("table name")
        where = self.parse_expression() if self._accept_keyword("WHERE") else None
        return n.Delete(table, where)

    def _parse_create(self):
        """Parse CREATE TABLE or CREATE [UNIQUE] INDEX."""
        self._expect_keyword("CREATE")
        unique = bool(self._accept_keyword("UNIQUE"))
        if self._accept_keyword("INDEX"):
            name = self._expect_identifier("index name")
            self._expect_keyword("ON")
            table = self._expect_identifier("table name")
            self._expect_punct("(")
            column = self._expect_identifier("column name")
            self._expect_punct(")")
            kind = "btree"
            if self._accept_word("using"):
                if self._accept_word("hash"):
                    kind = "hash"
                elif not self._accept_word("btree"):
                    raise self._error("HASH or BTREE")
            return n.CreateIndex(name, table, column, unique, kind)
        if unique:
            raise self._error("INDEX")
        self._expect_keyword("TABLE")
        if_not_exists = False
        if self._accept_keyword("IF"):
            self._expect_keyword("NOT")
            self._expect_keyword("EXISTS")
            if_not_exists = True
        name = self._expect_identifier("table name")
        self._expect_punct("(")
        columns = [self._parse_column_def()]
        while self._accept_punct(","):
            columns.append(self._parse_column_def())
        self._expect_punct(")")
        return n.CreateTable(name, tuple(columns), if_not_exists)

    def _parse_column_def(self):
        """Parse ``name type[(len)] [NOT NULL|NULL|PRIMARY KEY|UNIQUE|DEFAULT expr]...``.

        Raises:
            ParseError: for a missing type, a non-integer length, or a bad constraint.
        """
        name = self._expect_identifier("column name")
        type_name = self._expect_identifier("type name")
        length = None
        if self._accept_punct("("):
            token = self._advance()
            if token.type is not TokenType.NUMBER or not isinstance(token.value, int):
                raise ParseError(f"type length must be an integer at {token.position}")
            length = token.value
            self._expect_punct(")")
        options = {"not_null": False, "primary_key": False, "unique": False, "default": None}
        while True:
            if self._accept_keyword("NOT"):
                self._expect_keyword("NULL")
                options["not_null"] = True
            elif self._accept_keyword("NULL"):
                options["not_null"] = False
            elif self._accept_keyword("PRIMARY"):
                if not self._accept_word("key"):
                    raise self._error("KEY")
                options["primary_key"] = True
                options["not_null"] = True
            elif self._accept_keyword("UNIQUE"):
                options["unique"] = True
            elif self._accept_keyword("DEFAULT"):
                options["default"] = self._parse_unary()
            else:
                return n.ColumnDef(name, type_name, length, **options)

    def _parse_drop(self):
        """Parse ``DROP TABLE [IF EXISTS] name`` or ``DROP INDEX name``."""
        self._expect_keyword("DROP")
        if self._accept_keyword("INDEX"):
            return n.DropIndex(self._expect_identifier("index name"))
        self._expect_keyword("TABLE")
        if_exists = False
        if self._accept_keyword("IF"):
            self._expect_keyword("EXISTS")
            if_exists = True
        return n.DropTable(self._expect_identifier("table name"), if_exists)

    def _parse_identifier_list(self):
        """Parse ``ident, ident, ...`` (at least one)."""
        names = [self._expect_identifier("column name")]
        while self._accept_punct(","):
            names.append(self._expect_identifier("column name"))
        return names

    def _parse_expression_list(self):
        """Parse ``expr, expr, ...`` (at least one)."""
        exprs = [self.parse_expression()]
        while self._accept_punct(","):
            exprs.append(self.parse_expression())
        return exprs

    # ------------------------------------------------------------ expressions

    def parse_expression(self):
        """Parse a full expression (lowest precedence: OR)."""
        left = self._parse_and()
        while self._accept_keyword("OR"):
            left = n.BinaryOp("OR", left, self._parse_and())
        return left

    def _parse_and(self):
        """Parse a chain of ``AND`` operands."""
        left = self._parse_not()
        while self._accept_keyword("AND"):
            left = n.BinaryOp("AND", left, self._parse_not())
        return left

    def _parse_not(self):
        """Parse prefix ``NOT`` (right-recursive), otherwise a predicate."""
        if self._accept_keyword("NOT"):
            return n.UnaryOp("NOT", self._parse_not())
        return self._parse_predicate()

    def _parse_predicate(self):
        """Parse an additive expression optionally followed by one comparison-like suffix."""
        left = self._parse_additive()
        token = self.current
        if token.is_operator(*_COMPARISON_OPS):
            self._advance()
            op = {"==": "=", "!=": "<>"}.get(token.value, token.value)
            return n.BinaryOp(op, left, self._parse_additive())
        if self._accept_keyword("IS"):
            negated = bool(self._accept_keyword("NOT"))
            self._expect_keyword("NULL")
            return n.IsNull(left, negated)
        negated = False
        if self.current.is_keyword("NOT") and self._peek().is_keyword("BETWEEN", "IN", "LIKE"):
            self._advance()
            negated = True
        if self._accept_keyword("BETWEEN"):
            low = self._parse_additive()
            self._expect_keyword("AND")
            return n.Between(left, low, self._parse_additive(), negated)
        if self._accept_keyword("IN"):
            self._expect_punct("(")
            if self.current.is_keyword("SELECT"):
                query = self.parse_select()
                self._expect_punct(")")
                return n.InSubquery(left, query, negated)
            items = tuple(self._parse_expression_list())
            self._expect_punct(")")
            return n.InList(left, items, negated)
        if self._accept_keyword("LIKE"):
            return n.Like(left, self._parse_additive(), negated)
        return left

    def _parse_additive(self):
        """Parse ``+``, ``-`` and ``||`` chains (left-associative)."""
        left = self._parse_multiplicative()
        while self.current.is_operator("+", "-", "||"):
            op = self._advance().value
            left = n.BinaryOp(op, left, self._parse_multiplicative())
        return left

    def _parse_multiplicative(self):
        """Parse ``*``, ``/`` and ``%`` chains (left-associative)."""
        left = self._parse_unary()
        while self.current.is_operator("*", "/", "%"):
            op = self._advance().value
            left = n.BinaryOp(op, left, self._parse_unary())
        return left

    def _parse_unary(self):
        """Parse prefix ``-``/``+``; a minus directly before a number folds into the literal."""
        if self.current.is_operator("-", "+"):
            op = self._advance().value
            operand = self._parse_unary()
            if op == "+":
                return operand
            if isinstance(operand, n.Literal) and isinstance(operand.value, (int, float)) \
                    and not isinstance(operand.value, bool):
                return n.Literal(-operand.value)
            return n.UnaryOp("-", operand)
        return self._parse_primary()

    def _parse_primary(self):
        """Parse literals, parenthesised expressions/subqueries, CASE, CAST, EXISTS,
        function calls and (qualified) column references.

        Raises:
            ParseError: when no expression starts at the cursor.
        """
        token = self.current
        if token.type in (TokenType.NUMBER, TokenType.STRING):
            self._advance()
            return n.Literal(token.value)
        if self._accept_keyword("NULL"):
            return n.Literal(None)
        if self._accept_keyword("TRUE"):
            return n.Literal(True)
        if self._accept_keyword("FALSE"):
            return n.Literal(False)
        if token.is_keyword("CASE"):
            return self._parse_case()
        if self._accept_keyword("CAST"):
            self._expect_punct("(")
            operand = self.parse_expression()
            self._expect_keyword("AS")
            type_name = self._expect_identifier("type name")
            self._expect_punct(")")
            return n.Cast(operand, type_name)
        if self._accept_keyword("EXISTS"):
            self._expect_punct("(")
            query = self.parse_select()
            self._expect_punct(")")
            return n.Exists(query)
        if self._accept_punct("("):
            if self.current.is_keyword("SELECT"):
                inner = n.ScalarSubquery(self.parse_select())
            else:
                inner = self.parse_expression()
            self._expect_punct(")")
            return inner
        if token.type is TokenType.IDENT:
            self._advance()
            if self.current.is_punct("("):
                return self._parse_function_call(token.value)
            if self._accept_punct("."):
                return n.ColumnRef(self._expect_identifier("column name"), token.value)
            return n.ColumnRef(token.value)
        raise self._error("an expression")

    def _parse_function_call(self, name):
        """Parse the argument list of ``name(...)``: ``*``, ``DISTINCT expr`` or plain arguments."""
        self._expect_punct("(")
        name = name.lower()
        if self.current.is_operator("*"):
            self._advance()
            self._expect_punct(")")
            return n.FunctionCall(name, (), star=True)
        distinct = bool(self._accept_keyword("DISTINCT"))
        args = ()
        if not self.current.is_punct(")"):
            args = tuple(self._parse_expression_list())
        self._expect_punct(")")
        return n.FunctionCall(name, args, distinct=distinct)

    def _parse_case(self):
        """Parse simple (``CASE x WHEN v``) and searched (``CASE WHEN cond``) CASE expressions.

        Raises:
            ParseError: if there is no WHEN branch or END is missing.
        """
        self._expect_keyword("CASE")
        operand = None
        if not self.current.is_keyword("WHEN"):
            operand = self.parse_expression()
        whens = []
        while self._accept_keyword("WHEN"):
            condition = self.parse_expression()
            self._expect_keyword("THEN")
            whens.append((condition, self.parse_expression()))
        if not whens:
            raise self._error("WHEN")
        default = self.parse_expression() if self._accept_keyword("ELSE") else None
        self._expect_keyword("END")
        return n.Case(operand, tuple(whens), default)


def parse(text):
    """Parse SQL text containing exactly one statement (a trailing ``;`` is allowed).

    Raises:
        ParseError: on a syntax error or when the text holds several statements.
    """
    statements = Parser(text).parse_script()
    if len(statements) != 1:
        raise ParseError(f"expected a single statement, got {len(statements)}")
    return statements[0]


def parse_script(text):
    """Parse SQL text containing any number (at least one) of ``;``-separated statements."""
    return Parser(text).parse_script()


def parse_expression(text):
    """Parse a standalone expression such as ``a + 1 > 3``.

    Raises:
        ParseError: if tokens remain after the expression.
    """
    parser = Parser(text)
    expr = parser.parse_expression()
    if parser.current.type is not TokenType.EOF:
        raise parser._error("end of input")
    return expr
