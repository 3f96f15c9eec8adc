export declare function hello(): string;
