"""Writing MLflow search filters and reading every page of a search.

MLflow's filter grammar takes a string value between single or double quotes and keeps what stands
between them as it is: it has no escape. ``'it\\'s'`` matches the value ``it\\'s``, backslash included,
and a doubled quote is kept doubled. A value holding a single quote can therefore only be written between
double quotes, and one ending in a backslash not at all (the tokenizer reads backslash-quote as a quote
inside the string and runs on into the next value). :func:`quoted` writes a value the one way that
matches it, and refuses one no filter can match.

:func:`paged` reads every page of ``search_runs``, ``search_model_versions`` or any MLflow search that
takes a ``page_token`` and returns a paged list with ``.token``.

>>> quoted("adult-fairband"), quoted("it's"), quoted(7)
("'adult-fairband'", '"it\\'s"', "'7'")
>>> quoted('both \\' and "')
Traceback (most recent call last):
...
fairops.errors.InputError: MLflow's search filter cannot match the value 'both \\' and "': it holds both kinds of quote
"""

from __future__ import annotations

from ..errors import InputError


def quoted(value) -> str:
    """``value`` (as text) as a string literal of MLflow's search filter grammar (see the module docstring)."""
    text = str(value)
    if not text.endswith("\\"):
        for quote in ("'", '"'):
            if quote not in text:
                return f"{quote}{text}{quote}"
        reason = "it holds both kinds of quote"
    else:
        reason = "it ends in a backslash"
    raise InputError(f"MLflow's search filter cannot match the value {text!r}: {reason}")


def tags_equal(**tags) -> str:
    """A filter for runs whose tags hold these values (``AND``), keys in backticks; pass unusual keys
    with ``**{"fairops.role": ...}``.

    >>> tags_equal(**{"fairops.role": "trial", "fairops.study": "it's"})
    'tags.`fairops.role` = \\'trial\\' and tags.`fairops.study` = "it\\'s"'
    """
    return " and ".join(f"tags.`{key}` = {quoted(value)}" for key, value in tags.items())


def paged(search, *args, page_size: int = 1000, **kwargs) -> list:
    """Every result of ``search(*args, max_results=page_size, page_token=..., **kwargs)``, page after page.

    >>> pages = {None: (["a", "b"], "2"), "2": (["c"], None)}
    >>> class Page(list):
    ...     def __init__(self, items, token):
    ...         super().__init__(items)
    ...         self.token = token
    >>> paged(lambda max_results, page_token: Page(*pages[page_token]))
    ['a', 'b', 'c']
    """
    found, token = [], None
    while True:
        page = search(*args, max_results=page_size, page_token=token, **kwargs)
        found.extend(page)
        token = page.token
        if not token:
            return found
