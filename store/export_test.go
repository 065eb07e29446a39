package store

// LastReleasedMigration is lastReleasedMigration, for the package's
// external tests.
const LastReleasedMigration = lastReleasedMigration
