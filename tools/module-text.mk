# tools/text_font and tools/png_write: the one text renderer and the one PNG writer of the
# tools' pictures (plot, clipdump). The text renderer has a built-in
# bitmap font, and glyphs of a real font through FreeType (fonts-dejavu-core by default) for
# UTF-8 captions when the build has FreeType.
tools_SRCS += tools/text_font.c tools/png_write.c
DEBIAN_PKGS += libfreetype-dev fonts-dejavu-core

TESTS += test_text_font
test_text_font_LIBS := tools
TESTS += test_png_write
test_png_write_LIBS := tools data common
