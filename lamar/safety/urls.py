"""Credentials in URLs: a password before the host (`user:<password>@host`) and query parameters named for one."""

from __future__ import annotations

import re

from lamar.safety.placeholders import is_placeholder

DATABASE_SCHEMES = (
    "postgres", "mysql", "mariadb", "mongodb", "redis", "rediss", "amqp", "mssql", "sqlserver",
    "oracle", "cockroachdb", "clickhouse", "couchdb", "neo4j", "cassandra", "jdbc", "db2", "snowflake",
)
URL_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{0,30})://(?P<user>[^\s:/@?#\"'<>\[\]]{0,200}):"
    r"(?P<secret>[^\s/\"'<>]{1,500})@(?=[^\s/?#@\"'<>]+)"
)
URL_QUERY = re.compile(
    # Any parameter whose name holds password/secret/token (sslpassword, client_secret, ...).
    r"(?P<key>[?&;#](?:[\w.-]{0,40}(?:password|passwd|secret|token|signature|credential)[\w.-]{0,40}"
    r"|api_key|apikey|api-key|pwd|sig|key|code))=(?P<secret>[^&\s\"'<>]+)",
    re.IGNORECASE,
)


def url_kind(match: re.Match[str]) -> str:
    scheme = match.group("scheme").lower()
    return "database-password" if scheme.startswith(DATABASE_SCHEMES) else "url-password"


def url_password_is_harmless(match: re.Match[str]) -> bool:
    return is_placeholder(match.group("secret"))


def query_is_harmless(match: re.Match[str]) -> bool:
    value = match.group("secret")
    # A bare "key" parameter is often a sort or cache key; only long random-looking values count.
    if match.group("key")[1:].lower() == "key" and len(value) < 16:
        return True
    if match.group("key")[1:].lower() == "code" and len(value) < 40:
        return True  # an OAuth or error code; an Azure Functions key (?code=) is 54+ characters
    return is_placeholder(value)


__all__ = ["DATABASE_SCHEMES", "URL_QUERY", "URL_USERINFO", "query_is_harmless", "url_kind", "url_password_is_harmless"]
