#!/bin/bash
# placeholder written for the corpus (not from the upstream repository): the compose file names this path
