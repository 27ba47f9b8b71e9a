"""One screen per wizard step, plus the modal dialogs."""
