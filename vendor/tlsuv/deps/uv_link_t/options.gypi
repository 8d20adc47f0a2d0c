{
  "variables": {
    "uv_library": "static_library",
  },
}
