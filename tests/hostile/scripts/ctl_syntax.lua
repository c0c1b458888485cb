-- an unfinished string holding raw control characters: the syntax error quotes them
x = "]0;title[2J
