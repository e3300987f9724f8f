# tools/text_font: the one text renderer of the tools' pictures (plot, clipdump): a built-in
# bitmap font, and glyphs of a real font through FreeType (fonts-dejavu-core by default) for
# UTF-8 captions when the build has FreeType.
LIBS += avtext
avtext_SRCS := tools/text_font.c
DEBIAN_PKGS += libfreetype-dev fonts-dejavu-core

TESTS += test_text_font
test_text_font_LIBS := avtext
