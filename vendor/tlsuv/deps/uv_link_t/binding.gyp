# Just for npm
{
  "targets": [{"target_name":"nop","type":"<(library)"}],
}
