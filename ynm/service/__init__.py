"""The service layer: configuration layers, mounts and routing, and the operations over them.

Modules: ``config`` (files, layers, git discovery; reference/cli.md §5), ``mounts``, ``open``,
``ynm`` (class ``Ynm``), ``importing`` (``ynm import``), ``tools``, ``redaction``, ``sessions``
and ``sync``.
"""
