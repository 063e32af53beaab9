"""LIBERO's 130 language tasks on our table: their BDDL definitions read from the installed
``libero`` package (``bddl``), mapped onto our catalogue, fixtures and oracle (``mapping``),
laid out per seed (``scenes``) and run as ``frankenbot bench --suite libero...`` (``bench``)."""
