--- world: 1
require("os")
