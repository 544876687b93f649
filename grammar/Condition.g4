// The `when:` condition language of policy.md ("Condition expressions").
// Precedence, loosest first: ||, &&, !, then a single test.
grammar Condition;

condition : expr EOF ;

expr
  : NOT expr                                  # Not
  | expr AND expr                             # And
  | expr OR expr                              # Or
  | LPAREN expr RPAREN                        # Group
  | operand AMP value (op=(EQ | NE) value)?   # Masked
  | operand IN LBRACE value (COMMA value)* RBRACE  # Member
  | operand op=(EQ | NE | LT | LE | GT | GE) value # Compare
  ;

operand : IDENT ;

// A value is one or more terms or'ed together: `O_WRONLY | O_RDWR`.
value : term (PIPE term)* ;
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
