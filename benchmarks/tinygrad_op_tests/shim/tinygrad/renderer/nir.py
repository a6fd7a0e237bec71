class NIRRenderer:
    pass
