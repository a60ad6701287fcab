#ifndef COVERD_CSQLITE_SHIM_H
#define COVERD_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: bind text that SQLite copies.
static inline int coverd_sqlite3_bind_text_copy(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}
#endif
