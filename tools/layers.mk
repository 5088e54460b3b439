# SPDX-License-Identifier: GPL-2.0
# The layers of src/ (docs/design.md, "Where the code lives"): for each folder, the folders its
# files may include besides itself, top to bottom. The one list: the Makefile compiles each
# folder with only these on its include path (and what their headers include in turn), and
# tools/check-layers.sh checks each include line against it. src/ (main.c) may include anything.
LAYER_commands := serve live options kernel output output/rules capture model lib
LAYER_serve := live options kernel output output/rules capture model lib
LAYER_live := options kernel model lib
LAYER_options := kernel output output/rules model lib
LAYER_kernel := model lib
LAYER_output := output/rules capture model lib
LAYER_output/rules := model lib
LAYER_capture := model lib
LAYER_model := lib
LAYER_lib :=
