# interpose: filled in by its owner
