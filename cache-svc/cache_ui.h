/*  cache_ui: the status page cache-svc serves at /ui.

    The page is ui/status.html in the source tree, kept as plain HTML so it
    can be edited as such; the build turns it into the bytes below
    (ui/embed.cmake, run by CMakeLists.txt whenever the page changes).
*/
#ifndef CACHE_UI_H
#define CACHE_UI_H

#include <stddef.h>

//  The page's bytes (UTF-8 HTML), followed by a NUL that cache_ui_page_len
//  does not count. Static, read-only.
extern const unsigned char cache_ui_page[];
extern const size_t cache_ui_page_len;

#endif
