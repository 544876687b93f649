// The `when:` condition language (docs/conditions.md),
// with C's precedence: || binds loosest, then &&, then the tests, whose
// operators (== != < <= > >= &) bind tighter than && in C; ! binds tightest.
// The grammar also accepts the forms C reads differently from what they
// seem to say (`x & M == V`, `x == A | B`, `!x == V`), so that the
// converter (compiler/frontend/condition.cpp) can refuse each with the
// parenthesized fix-it, as clang's -Wparentheses does.
grammar Condition;

condition : disjunction EOF ;

disjunction : conjunction (OR conjunction)* ;
conjunction : unary (AND unary)* ;

unary
  : NOT unary                                         # Not
  | LPAREN disjunction RPAREN                         # Group
  | LPAREN operand AMP value RPAREN op=relop value    # MaskedCompare
  | operand AMP value (op=relop value)?               # Masked
  | operand IN LBRACE value (COMMA value)* RBRACE     # Member
  | operand op=relop value                            # Comparison
  ;

relop : EQ | NE | LT | LE | GT | GE ;

operand : IDENT ;

// One or more terms or'ed together: `(O_WRONLY | O_RDWR)`. Outside `{}`
// C reads `x == A | B` as `(x == A) | B`, so there the parentheses are
// required (the converter says so); inside `{}` the commas delimit.
value : LPAREN terms RPAREN | terms ;
terms : term (PIPE term)* ;
term  : NUMBER | IDENT ;

AND    : '&&' ;
OR     : '||' ;
NOT    : '!' ;
AMP    : '&' ;
PIPE   : '|' ;
EQ     : '==' ;
NE     : '!=' ;
LE     : '<=' ;
GE     : '>=' ;
LT     : '<' ;
GT     : '>' ;
LPAREN : '(' ;
RPAREN : ')' ;
LBRACE : '{' ;
RBRACE : '}' ;
COMMA  : ',' ;
IN     : 'in' ;

NUMBER : '0' [xX] [0-9a-fA-F]+ | '0' [0-7]* | [1-9] [0-9]* ;
IDENT  : [A-Za-z_] [A-Za-z0-9_]* ;
WS     : [ \t]+ -> skip ;
// Anything else becomes one token the parser rejects, so the error points at it.
INVALID : . ;
