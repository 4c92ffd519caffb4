"""An atomic version folder, its manifest, and the files beside the versions."""
