"""What chapter 4's op files share: the chapter tag and the warp size."""

CHAPTER = "pmpp-04"
WARP = 32
