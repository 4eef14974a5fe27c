//! Walking (filled in next).
